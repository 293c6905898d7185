// Vectors resized or assigned with their fresh pages made resident first
// (inline_analysis/resident.hpp): the same elements as std::vector's own
// resize and assign, whether or not new storage is needed; populate and the
// huge-page hint act on the whole pages inside a range only.
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

TEST_CASE("prefer_huge_pages marks the whole huge pages inside a range, and no others", "[resident]") {
  const std::size_t h = huge_page_bytes();
  if (h == 0) {
    WARN("this kernel has no transparent huge pages: the hint is a no-op");
    return;
  }
  REQUIRE(huge_pages_wanted().load());  // (the default)
  const std::size_t bytes = 6 * h;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  auto* p = static_cast<unsigned char*>(m);
  unsigned char* first = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(p) + h - 1) / h * h);
  // From 1 byte into the first whole huge page to 1 byte into the fourth:
  // the second and third whole huge pages only.
  prefer_huge_pages(first + 1, 3 * h);
  CHECK_FALSE(hinted(first));
  CHECK(hinted(first + h));
  CHECK(hinted(first + 3 * h - 1));
  CHECK_FALSE(hinted(first + 3 * h));
  // Less than a huge page: nothing.
  prefer_huge_pages(first + 4 * h, h - 1);
  CHECK_FALSE(hinted(first + 4 * h));
  // Turned off (ONLINEWS_HUGE_PAGES=0): nothing.
  huge_pages_wanted().store(false);
  prefer_huge_pages(first, h);
  huge_pages_wanted().store(true);
  CHECK_FALSE(hinted(first));
  // Contents unchanged.
  std::memset(first + h, 5, 2 * h);
  CHECK(first[h] == 5);
  CHECK(first[3 * h - 1] == 5);
  CHECK(first[3 * h] == 0);
  ::munmap(m, bytes);
}

TEST_CASE("resize_resident asks for huge pages for storage that holds one", "[resident]") {
  const std::size_t h = huge_page_bytes();
  if (h == 0) {
    WARN("this kernel has no transparent huge pages: the hint is a no-op");
    return;
  }
  std::vector<std::uint64_t> v;
  resize_resident(v, 3 * h / sizeof(std::uint64_t));
  // The second huge-page boundary inside the storage lies in a whole hinted huge page.
  const auto b = (reinterpret_cast<std::uintptr_t>(v.data()) + h - 1) / h * h;
  CHECK(hinted(reinterpret_cast<const void*>(b)));
  std::vector<std::uint64_t> small;
  resize_resident(small, 1024);  // below a huge page: no hint, wherever malloc put it
  CHECK(small.size() == 1024);
}
