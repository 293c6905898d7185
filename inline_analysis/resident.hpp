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

// Makes the whole pages inside [p, p + bytes) resident and writable, without
// changing their contents (safe while another thread writes to them).  Any
// thread; never on the recording hot path (it is a system call).
inline void populate(void* p, std::size_t bytes) {
  if (bytes == 0 || !populate_supported().load(std::memory_order_relaxed)) return;
  const std::size_t page = page_bytes();
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (hi <= lo) return;
  const int saved = errno;  // (the application's errno stays as it was)
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    populate_supported().store(false, std::memory_order_relaxed);
  }
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
