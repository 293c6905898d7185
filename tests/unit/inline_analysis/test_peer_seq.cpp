// PeerSeqIndex: (peer, seq) -> event index as per-peer rows, reused across
// epochs after clear().
#include <catch2/catch.hpp>

#include <tuple>
#include <vector>

#include "inline_analysis/peer_seq.hpp"

using onlinews::analysis::PeerSeqIndex;

TEST_CASE("PeerSeqIndex finds what was set, per peer and seq", "[peer_seq]") {
  PeerSeqIndex x;
  CHECK(x.empty());
  CHECK(x.find(3, 0) == nullptr);
  x.set(3, 0, 10);
  x.set(7, 2, 20);  // seq 0 and 1 of peer 7 stay empty
  x.set(3, 1, 11);
  x.set(3, 1, 12);  // overwrites
  CHECK(x.size() == 3);
  REQUIRE(x.find(3, 0) != nullptr);
  CHECK(*x.find(3, 0) == 10);
  CHECK(*x.find(3, 1) == 12);
  CHECK(*x.find(7, 2) == 20);
  CHECK(x.find(7, 0) == nullptr);
  CHECK(x.find(7, 3) == nullptr);
  CHECK(x.find(5, 0) == nullptr);
  std::vector<std::tuple<int, std::uint32_t, std::size_t>> seen;
  x.for_each([&](int p, std::uint32_t s, std::size_t v) { seen.emplace_back(p, s, v); });
  // Peers in order of their first entry, seqs ascending.
  CHECK(seen == std::vector<std::tuple<int, std::uint32_t, std::size_t>>{{3, 0, 10}, {3, 1, 12}, {7, 2, 20}});
}

TEST_CASE("PeerSeqIndex starts empty again after clear, with rows reused by other peers", "[peer_seq]") {
  PeerSeqIndex x;
  for (std::uint32_t s = 0; s < 5000; ++s) x.set(1, s, s);
  x.set(2, 0, 99);
  x.clear();
  CHECK(x.empty());
  CHECK(x.find(1, 0) == nullptr);
  CHECK(x.find(2, 0) == nullptr);
  // Peer 2 now takes the first row (and the cache of the last peer must not
  // point at a stale row).
  x.set(2, 1, 5);
  x.set(1, 0, 6);
  x.set(2, 2, 7);
  CHECK(x.size() == 3);
  CHECK(x.find(2, 0) == nullptr);
  CHECK(*x.find(2, 1) == 5);
  CHECK(*x.find(2, 2) == 7);
  CHECK(*x.find(1, 0) == 6);
  CHECK(x.find(1, 1) == nullptr);
}
