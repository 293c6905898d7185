// The asynchronous replay (DESIGN.md §4): every transport operation suspends
// until the other ranks did their part, and the driver resumes ranks in any
// order.  With LocalWorld's scramble option every step completes a random
// number of ticks late and local work is cut into random slices, so steps of
// different ranks -- also of a rank an epoch ahead of another -- complete
// in every order.  The results must not depend on that order.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Four epochs of three ranks with everything the replay exchanges: blocking
// and nonblocking messages (one crossing a cut), a probe, Late Sender and
// Late Receiver waits, a barrier, a broadcast and a reduce, and a scan on a
// sub-communicator of ranks 1 and 2.
std::vector<VRank> program() {
  auto r = make_ranks(3);
  const std::uint16_t sub1 = r[1].add_comm(77, {1, 2}), sub2 = r[2].add_comm(77, {1, 2});
  double t = 0.0;
  for (int it = 0; it < 4; ++it) {
    r[0].region(t, t + 1.0, kWork);
    r[0].send(t + 1.0, t + 1.1, 1, it);                     // r1 waits 0.8 (Late Sender)
    r[1].recv(t + 0.2, t + 1.2, 0, it);
    r[1].send(t + 1.2, t + 1.7, 2, 9, 1 << 20, rt::kRegion_MPI_Send,
              evflag::kSynchronous);                           // r2 posts at +1.65: Late Receiver 0.45
    r[2].region(t, t + 1.6, kSolve);
    r[2].probe(t + 1.6, t + 1.65, 1, 9);
    r[2].recv(t + 1.65, t + 1.7, 1, 9);
    r[2].isend(t + 1.7, t + 1.71, 0, 5, 8, 100 + static_cast<std::uint32_t>(it));
    r[0].irecv(t + 1.1, t + 1.15, 2, 5, 200 + static_cast<std::uint32_t>(it));
    r[0].complete(t + 1.15, t + 1.75, rt::kRegion_MPI_Wait, {{200 + static_cast<std::uint32_t>(it), true, 2, 5}});
    r[2].complete(t + 1.71, t + 1.72, rt::kRegion_MPI_Wait, {{100 + static_cast<std::uint32_t>(it), false}});
    r[1].coll(t + 1.7, t + 1.9, rt::kRegion_MPI_Scan, -1, 8, 8, sub1);
    r[2].coll(t + 1.72, t + 1.9, rt::kRegion_MPI_Scan, -1, 8, 8, sub2);
    r[0].coll(t + 1.75, t + 2.1, rt::kRegion_MPI_Bcast, 0, 8, 8);
    r[1].coll(t + 1.9, t + 2.1, rt::kRegion_MPI_Bcast, 0, 0, 8);
    r[2].coll(t + 1.95, t + 2.1, rt::kRegion_MPI_Bcast, 0, 0, 8);
    r[0].coll(t + 2.1, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 2.3, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(t + 2.4, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (it == 1) {  // a message that crosses the next cut
      r[0].isend(t + 2.5, t + 2.6, 1, 42, 8, 300);
      r[0].complete(t + 2.6, t + 2.7, rt::kRegion_MPI_Wait, {{300, false}});
    }
    if (it == 2) r[1].recv(t + 2.5, t + 2.6, 0, 42);
    r[0].coll(t + 2.7, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 0);
    r[1].coll(t + 2.7, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 0);
    r[2].coll(t + 2.6, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 24);
    r[0].coll(t + 2.9, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 2.9, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(t + 2.95, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (it < 3) {
      for (auto& v : r) v.cut();
    }
    t += 3.0;
  }
  for (auto& v : r) v.leave(t);
  return r;
}

// Every metric of every call path of every rank.
std::vector<double> everything(const std::vector<RankResult>& res) {
  std::vector<double> v;
  for (const auto& r : res) {
    const auto& cps = r.analyzer->callpaths();
    for (std::uint32_t cp = 0; cp < cps.size(); ++cp) {
      for (int m = 0; m < analysis::kMetricCount; ++m) {
        v.push_back(r.analyzer->profile().run_value(0, cp, static_cast<Metric>(m)));
      }
    }
  }
  return v;
}

}  // namespace

TEST_CASE("results do not depend on the order in which steps complete", "[async]") {
  auto base_ranks = program();
  const auto base = replay(base_ranks);
  // The program exercises what it should (so the comparison means something).
  CHECK(base[1].get(Metric::mpi_latesender) == Approx(4 * 0.8));
  CHECK(base[1].get(Metric::mpi_latereceiver) == Approx(4 * 0.45));
  CHECK(base[0].get(Metric::delay_latesender) > 0.0);   // rank 0's work delayed rank 1
  CHECK(base[2].get(Metric::delay_latereceiver) > 0.0);  // rank 2's late receive delayed rank 1
  CHECK(base[0].get(Metric::critical_path) > 0.0);
  CHECK(base[1].facts[2].cross_epoch_messages == 1);
  const auto expected = everything(base);
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    CAPTURE(seed);
    auto ranks = program();
    const auto res = replay(ranks, {"all"}, {seed, true});
    const auto got = everything(res);
    REQUIRE(got.size() == expected.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] == Approx(expected[i]).margin(1e-12) ? 0 : 1;
    CHECK(differ == 0);
  }
}

TEST_CASE("the in-process driver reports a deadlock instead of hanging", "[async]") {
  analysis::LocalWorld world(2, {3, true});
  // Rank 1 waits for a message that rank 0 never posts.
  CHECK_THROWS_WITH(world.run([](int r, analysis::Transport& t) -> analysis::Task<> {
                      if (r == 1) co_await t.take(0);
                    }),
                    Catch::Contains("deadlock"));
}
