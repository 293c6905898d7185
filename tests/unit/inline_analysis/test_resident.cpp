// Vectors resized or assigned with their fresh pages made resident first
// (inline_analysis/resident.hpp): the same elements as std::vector's own
// resize and assign, whether or not new storage is needed.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstdint>
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
