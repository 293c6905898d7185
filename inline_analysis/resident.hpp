// Fresh anonymous memory made resident in one system call instead of a page
// fault per page: the runtime's event rings and the copies drained from them,
// and the analysis' largest per-window arrays.  Why: a first write to a page traps into the kernel (and on
// a VM the host), and in a pipeline of ranks a rank that stalls there holds
// up the ranks downstream.  Measured on the 2-core VM of benchmarks/README.md
// ("Page faults in the loop"): a 4-rank wavefront touching a fresh page every
// 4 steps (what the event ring did) ran its loop 20 % slower; the same pages
// made resident 64 at a time, 2 % slower.  An epoch's first analysis, in
// fresh memory, faults too (benchmarks/README.md, fortieth session).
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23  // Linux >= 5.14 (older C library headers lack it)
#endif

namespace onlinews::analysis {

inline std::size_t page_bytes() {
  static const std::size_t n = [] {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return n;
}

// `bytes` rounded up to whole pages.
inline std::size_t whole_pages(std::size_t bytes) { return (bytes + page_bytes() - 1) / page_bytes() * page_bytes(); }

// False once the kernel refused MADV_POPULATE_WRITE (older than 5.14): the
// pages then fault in when first written, as without this.
inline std::atomic<bool>& populate_supported() {
  static std::atomic<bool> ok{true};
  return ok;
}

// madvise(advice) on the whole units (pages, huge pages) inside
// [p, p + bytes); `ok` turns false if the kernel does not know the advice.
// The application's errno stays as it was.
inline void advise_inside(void* p, std::size_t bytes, std::size_t unit, int advice, std::atomic<bool>& ok) {
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + unit - 1) / unit * unit;
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) / unit * unit;
  if (hi <= lo) return;
  const int saved = errno;
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, advice) != 0 && errno == EINVAL) {
    ok.store(false, std::memory_order_relaxed);
  }
  errno = saved;
}

// Makes the whole pages inside [p, p + bytes) resident and writable, without
// changing their contents (safe while another thread writes to them).  Any
// thread; never on the recording hot path (it is a system call).
inline void populate(void* p, std::size_t bytes) {
  if (bytes == 0 || !populate_supported().load(std::memory_order_relaxed)) return;
  advise_inside(p, bytes, page_bytes(), MADV_POPULATE_WRITE, populate_supported());
}

// Transparent huge pages for the event rings (runtime/event_ring.hpp): one
// fault, or one populated block, per huge page (2 MiB on x86-64) instead of
// one per 4 KiB page.  Measured on the VM of benchmarks/README.md
// ("Huge pages for the rings", fifty-second session): 16 MiB of fresh
// memory written once took 54 ms in 4 KiB pages, 24 ms populated first,
// 1.1-1.2 ms in huge pages.  Only in mappings of our own (map_fresh): the
// kernel keeps the mark on the mapping, and heap memory that carried it
// would pass it on to the application's later allocations there.
// ONLINEWS_HUGE_PAGES=0 turns it off (runtime/hooks_init.cpp).

// The huge page size (the PMD size), 0 if the kernel has no transparent
// huge pages or they are off (`never`).  (errno is kept: the first call may
// come from any thread.)
inline std::size_t huge_page_bytes() {
  static const std::size_t n = [] {
    const int saved = errno;
    std::size_t v = 0;
    if (std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r")) {
      unsigned long long x = 0;
      if (std::fscanf(f, "%llu", &x) == 1 && x > page_bytes() && (x & (x - 1)) == 0) v = static_cast<std::size_t>(x);
      std::fclose(f);
    }
    if (std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
      char mode[128] = {};
      if (std::fgets(mode, sizeof mode, f) != nullptr && std::strstr(mode, "[never]") != nullptr) v = 0;
      std::fclose(f);
    }
    errno = saved;
    return v;
  }();
  return n;
}
// Whether map_fresh asks for huge pages (the configuration; false once the
// kernel refused the hint).
inline std::atomic<bool>& huge_pages_wanted() {
  static std::atomic<bool> on{true};
  return on;
}

// `bytes` (rounded up to whole pages) of fresh anonymous memory, nullptr if
// the kernel refuses.  If huge pages are wanted and it holds at least 8 of
// them, it is a mapping of its own, aligned to a huge page and marked
// MADV_HUGEPAGE (the mark goes with the mapping at unmap_fresh: nothing else
// ever lives in it).  (At least 8: where huge pages are large -- 32 MiB with
// arm64's 16 KiB pages, 512 MiB with 64 KiB -- a ring would be resident in
// steps too large for its use.)  Any thread; never on the recording hot path.
inline void* map_fresh(std::size_t bytes) {
  bytes = whole_pages(bytes);
  const int saved = errno;
  const std::size_t h = huge_pages_wanted().load(std::memory_order_relaxed) ? huge_page_bytes() : 0;
  const bool huge = h != 0 && bytes / 8 >= h;
  // (Huge: over-allocated by a huge page, and the parts before and after
  // the aligned span go back at once.)
  const std::size_t pad = huge ? h : 0;
  void* out = nullptr;
  void* m = ::mmap(nullptr, bytes + pad, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m != MAP_FAILED) {
    const auto a = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t lo = huge ? (a + h - 1) / h * h : a, hi = lo + bytes, end = a + bytes + pad;
    if (lo > a) ::munmap(m, lo - a);
    if (end > hi) ::munmap(reinterpret_cast<void*>(hi), end - hi);
    out = reinterpret_cast<void*>(lo);
    // (All of it: the mapping is ours, and a tail short of a huge page
    // stays in 4 KiB pages anyway.)
    if (huge) advise_inside(out, bytes, page_bytes(), MADV_HUGEPAGE, huge_pages_wanted());
  }
  errno = saved;
  return out;
}
inline void unmap_fresh(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  const int saved = errno;
  ::munmap(p, whole_pages(bytes));
  errno = saved;
}

// Below this a system call saves too few page faults to be worth it (and
// small blocks often come from malloc memory that is resident already).
constexpr std::size_t kPopulateMinBytes = 64 * 1024;

// `v` resized to `n` (new elements value-initialized), or assigned `n`
// copies of `x`.  Where that needs new storage, the pages it writes now
// are made resident first; capacity beyond `n` is not.  The capacity grows
// as std::vector's would.
template <class T, class A>
void resize_resident(std::vector<T, A>& v, std::size_t n) {
  if (n > v.capacity() && n * sizeof(T) >= kPopulateMinBytes) {
    // (Fresh storage populated before the elements move in: reserve()
    // would copy them into fresh pages, a fault each.  So the size that
    // counts is n, not the growth: a large vector grown a little is
    // copied whole.)
    std::vector<T, A> fresh(v.get_allocator());
    fresh.reserve(std::max(n, 2 * v.size()));
    populate(fresh.data(), n * sizeof(T));
    fresh.insert(fresh.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    v.swap(fresh);
  }
  v.resize(n);
}
template <class T, class A>
void assign_resident(std::vector<T, A>& v, std::size_t n, const T& x) {
  if (n > v.capacity() && n * sizeof(T) >= kPopulateMinBytes) {
    std::vector<T, A> fresh(v.get_allocator());  // (`v` unchanged if this throws; `x` may lie in it)
    fresh.reserve(n);
    populate(fresh.data(), n * sizeof(T));
    fresh.assign(n, x);
    v.swap(fresh);
    return;
  }
  v.assign(n, x);
}

}  // namespace onlinews::analysis
