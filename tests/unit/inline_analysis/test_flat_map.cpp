// FlatMap (inline_analysis/flat_map.hpp) against std::unordered_map under a
// seeded random mix of inserts, lookups and erases: with its own hash (few
// distinct keys, so the table stays small and full), and with a hash that
// gives 16 keys the same value, so that probe runs are long, wrap around the
// table's end, and every erase shifts entries back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "inline_analysis/flat_map.hpp"

using onlinews::analysis::FlatMap;

namespace {

struct Colliding {
  std::size_t operator()(std::uint64_t k) const { return static_cast<std::size_t>(k >> 4); }
};

template <class Hash>
void against_unordered_map() {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 rng(seed);
    FlatMap<std::uint64_t, int, Hash> m;
    std::unordered_map<std::uint64_t, int> ref;
    const std::uint64_t range = seed * 40;  // 40..160 distinct keys: long probe runs
    for (int step = 0; step < 20000; ++step) {
      const std::uint64_t k = rng() % range;
      switch (rng() % 4) {
        case 0:
        case 1:
          m[k] = step;
          ref[k] = step;
          break;
        case 2:
          REQUIRE(m.erase(k) == (ref.erase(k) == 1));
          break;
        default: {
          const int* v = m.find(k);
          auto it = ref.find(k);
          REQUIRE((v != nullptr) == (it != ref.end()));
          if (v != nullptr) REQUIRE(*v == it->second);
        }
      }
      REQUIRE(m.size() == ref.size());
      if (step % 5000 == 4999) {  // every entry reachable, none extra
        std::size_t n = 0;
        m.for_each([&](std::uint64_t key, int v) {
          ++n;
          REQUIRE(ref.at(key) == v);
        });
        REQUIRE(n == ref.size());
        for (const auto& [key, v] : ref) REQUIRE(m.find(key) != nullptr);
      }
    }
    m.clear();
    REQUIRE(m.empty());
    for (const auto& [key, v] : ref) REQUIRE(m.find(key) == nullptr);
    m[7] = 1;  // usable after clear, slots kept
    REQUIRE(*m.find(7) == 1);
  }
}

}  // namespace

TEST_CASE("FlatMap behaves as std::unordered_map under random inserts and erases", "[flat_map]") {
  against_unordered_map<onlinews::analysis::FlatHash<std::uint64_t>>();
}

TEST_CASE("FlatMap stays correct when keys share hash values", "[flat_map]") {
  against_unordered_map<Colliding>();
}
