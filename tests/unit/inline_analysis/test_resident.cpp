// Vectors resized or assigned with their fresh pages made resident first
// (inline_analysis/resident.hpp): the same elements as std::vector's own
// resize and assign, whether or not new storage is needed; populate acts on
// the whole pages inside a range only; map_fresh's mappings (the rings).
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "inline_analysis/resident.hpp"

using namespace onlinews::analysis;

namespace {
bool resident(const void* p, std::size_t bytes) {
  const std::size_t page = page_bytes();
  const auto lo = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) / page * page;
  std::vector<unsigned char> v((hi - lo) / page);
  REQUIRE(::mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()) == 0);
  for (unsigned char c : v) {
    if ((c & 1) == 0) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("resize_resident keeps the elements and value-initializes the new ones", "[resident]") {
  for (std::size_t n : {std::size_t{3}, std::size_t{1} << 20}) {  // below and above kPopulateMinBytes
    std::vector<std::int64_t> v{7, 8};
    resize_resident(v, n);
    REQUIRE(v.size() == n);
    CHECK(v[0] == 7);
    CHECK(v[1] == 8);
    CHECK(v[2] == 0);
    CHECK(v[n - 1] == 0);
    resize_resident(v, 1);  // (shrinking: storage kept)
    CHECK(v == std::vector<std::int64_t>{7});
  }
}

TEST_CASE("assign_resident fills with the value, also one taken from the vector itself", "[resident]") {
  for (std::size_t n : {std::size_t{5}, std::size_t{1} << 20}) {
    std::vector<std::int32_t> v{-1, 4};
    assign_resident(v, n, v[0]);  // (a reference into the old storage)
    REQUIRE(v.size() == n);
    CHECK(v[0] == -1);
    CHECK(v[n / 2] == -1);
    CHECK(v[n - 1] == -1);
    assign_resident(v, 2, std::int32_t{3});
    CHECK(v == std::vector<std::int32_t>{3, 3});
  }
}

TEST_CASE("populate makes the whole pages inside a range resident, and no others", "[resident]") {
  const std::size_t page = page_bytes();
  const std::size_t bytes = 64 * page;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  CHECK_FALSE(resident(p, page));  // fresh: nothing touched yet
  // From the middle of page 1 to the middle of page 9: pages 2-8 only.
  populate(p + page + page / 2, 8 * page);
  if (!populate_supported().load()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux < 5.14)");
  } else {
    CHECK(resident(p + 2 * page, 7 * page));
    CHECK_FALSE(resident(p + page, 1));
    CHECK_FALSE(resident(p + 9 * page, 1));
    CHECK_FALSE(resident(p + 10 * page, 54 * page));
  }
  for (std::size_t i = 0; i < bytes; i += 997) REQUIRE(p[i] == 0);  // contents unchanged
  ::munmap(m, bytes);
}

namespace {
// The VmFlags of the mapping that holds `p` (/proc/self/smaps), "" if none.
std::string vm_flags_at(const void* p) {
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  REQUIRE(f != nullptr);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  std::string flags;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a >= lo && a < hi;
    } else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      flags = line + 8;
      break;
    }
  }
  std::fclose(f);
  return flags;
}
bool hinted(const void* p) { return vm_flags_at(p).find(" hg") != std::string::npos; }
}  // namespace

TEST_CASE("map_fresh gives a mapping of its own: in huge pages when wanted and it holds 8", "[resident]") {
  const std::size_t h = huge_page_bytes();
  // (Huge pages of at most 4 MiB: 8 of them are at most 32 MiB here.)
  const bool huge = h != 0 && h <= (4u << 20) && huge_pages_wanted().load();
  if (!huge) WARN("no usable transparent huge pages of at most 4 MiB here: only plain mappings are tested");
  const std::size_t page = page_bytes();
  // Less than 8 huge pages (or none): page-aligned, not marked.
  for (const std::size_t bytes : {5 * page, h != 0 && h <= (4u << 20) ? 2 * h + page : 9 * page}) {
    auto* p = static_cast<unsigned char*>(map_fresh(bytes));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % page == 0);
    CHECK_FALSE(hinted(p));
    std::memset(p, 7, bytes);
    CHECK(p[bytes - 1] == 7);
    unmap_fresh(p, bytes);
  }
  if (!huge) return;
  // Eight huge pages and a page: aligned to a huge page, marked whole.
  const std::size_t bytes = 8 * h + page;
  auto* p = static_cast<unsigned char*>(map_fresh(bytes));
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % h == 0);
  CHECK(hinted(p));
  CHECK(hinted(p + bytes - 1));
  CHECK(p[0] == 0);
  CHECK(p[bytes - 1] == 0);
  std::memset(p, 5, bytes);
  CHECK(p[8 * h] == 5);
  unmap_fresh(p, bytes);
  // Not wanted (ONLINEWS_HUGE_PAGES=0): not marked.
  huge_pages_wanted().store(false);
  auto* q = static_cast<unsigned char*>(map_fresh(bytes));
  huge_pages_wanted().store(true);
  REQUIRE(q != nullptr);
  CHECK_FALSE(hinted(q));
  unmap_fresh(q, bytes);
}

TEST_CASE("the analysis' heap arrays are never marked for huge pages", "[resident]") {
  // (The mark stays on a mapping: on heap memory it would pass to the
  // application's later allocations there; docs/design.md.)
  const std::size_t h = huge_page_bytes();
  if (h == 0 || h > (4u << 20)) return;
  std::vector<std::uint64_t> a, b;
  resize_resident(a, 3 * h / sizeof(std::uint64_t));
  assign_resident(b, 3 * h / sizeof(std::uint64_t), std::uint64_t{1});
  for (const auto* v : {&a, &b}) {
    const auto first = (reinterpret_cast<std::uintptr_t>(v->data()) + h - 1) / h * h;  // a whole huge page inside
    CHECK_FALSE(hinted(reinterpret_cast<const void*>(first)));
  }
}
