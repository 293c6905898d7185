// AnalysisOptions::min_traced_wait (ONLINEWS_MIN_TRACED_WAIT): point-to-point
// waits below it are wait states, but get no synchronization point, so
// delay costs and the critical path pass them by; they are counted.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// r1 waits twice for r0: 0.4 us for a message r0 sends right after a short
// region (kSolve), then 0.5 s for one it sends after 1 s of work (kWork).
// r0 also sends r1 a synchronous message that r1 posts 0.3 us late.
std::vector<VRank> two_waits() {
  auto r = make_ranks(2);
  r[0].region(0.0, 0.1000004, kSolve);
  r[0].send(0.1000004, 0.1000005, 1, 1);
  r[1].recv(0.1, 0.1000006, 0, 1);  // Late Sender 0.4 us
  r[0].region(0.2, 1.2, kWork);
  r[0].send(1.2, 1.21, 1, 2);
  r[1].region(0.2, 0.7, kWork);
  r[1].recv(0.7, 1.21, 0, 2);  // Late Sender 0.5 s
  r[0].send(1.3, 1.4, 1, 3, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
  r[1].recv(1.3000003, 1.4, 0, 3);  // Late Receiver 0.3 us
  for (auto& v : r) v.coll(2.0, 2.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(2.1);
  return r;
}

}  // namespace

TEST_CASE("waits below min_traced_wait are wait states but not traced to causes", "[traced]") {
  auto a = two_waits();
  const auto all = replay(a);
  auto b = two_waits();
  const auto some = replay(b, {"all"}, {}, nullptr, 1e-6);
  // The wait states are the same (to 1 ns: the effect is 0.4 us).
  CHECK(some[1].get(Metric::mpi_latesender) == Approx(0.5 + 0.4e-6).epsilon(0).margin(1e-9));
  CHECK(some[1].get(Metric::mpi_latesender) == Approx(all[1].get(Metric::mpi_latesender)).epsilon(0).margin(1e-9));
  CHECK(some[0].get(Metric::mpi_latereceiver) == Approx(0.3e-6).margin(1e-9));
  // Traced: every wait has delay costs; with the threshold, the 0.5 s one only.
  CHECK(all[0].get(Metric::delay_latesender) == Approx(0.5 + 0.4e-6).epsilon(0).margin(1e-9));
  // (The 0.4 us wait's cost is r0's kSolve, which precedes its send.)
  CHECK(all[0].get(Metric::delay_latesender, kSolve) == Approx(0.4e-6).epsilon(0).margin(1e-9));
  CHECK(all[1].get(Metric::delay_latereceiver) == Approx(0.3e-6).margin(1e-9));
  // (The untraced wait no longer bounds an interval: the 0.5 s wait's one
  // starts at the window's start, and r0's kSolve takes a share of it.)
  CHECK(some[0].get(Metric::delay_latesender) == Approx(0.5).epsilon(0).margin(1e-9));
  // r0's excess over r1 in that interval: kSolve 0.1000004, kWork 1 - 0.5,
  // its first MPI_Send 0.1 us (r1's root and receive time exceed r0's).
  CHECK(some[0].get(Metric::delay_latesender, kSolve) ==
        Approx(0.5 * 0.1000004 / (0.1000004 + 0.5 + 0.1e-6)).epsilon(0).margin(1e-9));
  CHECK(some[1].get(Metric::delay_latereceiver) == 0.0);
  // Each rank counts its own untraced waits.
  CHECK(some[1].facts[0].untraced_waits == 1);
  CHECK(some[1].facts[0].untraced_wait_seconds == Approx(0.4e-6).margin(1e-9));
  CHECK(some[0].facts[0].untraced_waits == 1);
  CHECK(some[0].facts[0].untraced_wait_seconds == Approx(0.3e-6).margin(1e-9));
  CHECK(all[0].facts[0].untraced_waits == 0);
  CHECK(all[1].facts[0].untraced_waits == 0);
  // The critical path keeps its length.
  CHECK(some[0].get(Metric::critical_path) + some[1].get(Metric::critical_path) ==
        Approx(all[0].get(Metric::critical_path) + all[1].get(Metric::critical_path)).epsilon(0).margin(1e-9));
}
