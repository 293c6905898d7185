// Delay costs and wait-state classes (seed 000), on hand-built streams.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {
constexpr std::uint32_t kF = kWork;   // "f" of the paper's figure
constexpr std::uint32_t kG = kSolve;  // "g"

std::vector<VRank> figure3() {
  auto r = make_ranks(3);
  r[0].region(0.0, 2.0, kF);
  r[0].region(2.0, 5.0, kG);
  r[0].send(5.0, 5.2, 1, 3);
  r[1].region(1.0, 2.0, kF);
  r[1].recv(2.0, 6.0, 0, 3);
  r[1].send(6.0, 6.1, 2, 4);
  r[2].region(0.0, 2.0, kF);
  r[2].region(2.0, 3.0, kG);
  r[2].recv(4.0, 6.5, 1, 4);
  for (auto& v : r) v.leave(7.0);
  return r;
}
}  // namespace

TEST_CASE("seed 000, Figure 3: short- and long-term delay costs", "[delay]") {
  // A (rank 0): f 0-2, g 2-5, sends S3 to B at 5.
  // B (rank 1): idle 0-1, f 1-2, R3 from A entered at 2: waits 3 (until 5),
  //   1 of processing, leaves at 6; sends S4 to C at 6.
  // C (rank 2): f 0-2, g 2-3, idle 3-4, R4 from B entered at 4: waits 2.
  // Backward: at R4, B's interval profile exceeds C's only in R3's
  // processing (1) and B waited 3 inside it: scale 2 / (1 + 3) = 0.5, so R3's
  // processing gets 0.5 short-term and R3's wait 1.5 of long-term cost.  At R3,
  // A exceeds B by f: 1 and g: 3: scale 3 / 4 = 0.75 -> f 0.75 / 0.375,
  // g 2.25 / 1.125 (short / long).  Total 5 = 3 + 2 units of waiting.
  auto r = figure3();
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(3.0));
  CHECK(res[2].get(Metric::mpi_latesender) == Approx(2.0));

  CHECK(res[0].get(Metric::delay_latesender, kF) == Approx(0.75));
  CHECK(res[0].get(Metric::delay_latesender_longterm, kF) == Approx(0.375));
  CHECK(res[0].get(Metric::delay_latesender, kG) == Approx(2.25));
  CHECK(res[0].get(Metric::delay_latesender_longterm, kG) == Approx(1.125));
  CHECK(res[1].get(Metric::delay_latesender, rt::kRegion_MPI_Recv) == Approx(0.5));
  CHECK(res[1].get(Metric::delay_latesender_longterm) == Approx(0.0).margin(1e-12));
  CHECK(res[2].get(Metric::delay) == Approx(0.0).margin(1e-12));
  double total = 0;
  for (auto& x : res) total += x.get(Metric::delay);
  CHECK(total == Approx(5.0));  // = the waiting time explained

  // Classes: R4 on C is 0.5 direct (R3's processing) and 1.5 indirect
  // (propagated from R3), and terminal; R3 on B is direct, and half of it
  // propagated into R4.
  CHECK(res[2].get(Metric::mpi_wait_indirect_ls) == Approx(1.5));
  CHECK(res[2].get(Metric::mpi_wait_direct_ls) == Approx(0.5));
  CHECK(res[2].get(Metric::mpi_wait_terminal_ls) == Approx(2.0));
  CHECK(res[2].get(Metric::mpi_wait_propagating_ls) == Approx(0.0).margin(1e-12));
  CHECK(res[1].get(Metric::mpi_wait_direct_ls) == Approx(3.0));
  CHECK(res[1].get(Metric::mpi_wait_indirect_ls) == Approx(0.0).margin(1e-12));
  CHECK(res[1].get(Metric::mpi_wait_propagating_ls) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_wait_terminal_ls) == Approx(1.5));
}

TEST_CASE("selecting only the root causes still finds the waits they explain", "[delay]") {
  // ONLINEWS_ANALYSES=delay_costs (or rootcause): the wait-state patterns
  // run too, since their findings are the synchronization points; Figure 3's
  // costs are the same as with everything selected.
  for (const char* sel : {"delay_costs", "rootcause"}) {
    auto r = figure3();
    auto res = replay(r, {sel});
    CHECK(res[0].get(Metric::delay_latesender, kG) == Approx(2.25));
    CHECK(res[0].get(Metric::delay_latesender_longterm, kF) == Approx(0.375));
    double total = 0;
    for (auto& x : res) total += x.get(Metric::delay);
    CHECK(total == Approx(5.0));
  }
}

TEST_CASE("late receiver costs land on the receiver's work", "[delay]") {
  // r0 Ssends from 1 (waits until r1 posts at 3); r1 works 0-3 first.
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kG);
  r[0].send(1.0, 3.2, 1, 0, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
  r[1].region(0.0, 3.0, kF);
  r[1].recv(3.0, 3.2, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latereceiver) == Approx(2.0));
  // r1 exceeds r0 in f by 3 (r0 has g 1 instead, not a delay): 2 s explained by f.
  CHECK(res[1].get(Metric::delay_latereceiver, kF) == Approx(2.0));
  CHECK(res[0].get(Metric::delay) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get(Metric::mpi_wait_direct_lr) == Approx(2.0));
  CHECK(res[0].get(Metric::mpi_wait_terminal_lr) == Approx(2.0));
}

TEST_CASE("barrier delay costs land on the last rank's extra work", "[delay]") {
  // Ranks work 1, 2, 3 and 4 s in f, then meet in a barrier: the last rank
  // causes waits of 3, 2 and 1 s; its excess over each rank is all in f.
  auto r = make_ranks(4);
  for (int i = 0; i < 4; ++i) {
    r[i].region(0.0, 1.0 + i, kF);
    r[i].coll(1.0 + i, 4.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[i].leave(5.0);
  }
  auto res = replay(r);
  CHECK(res[3].get(Metric::delay_barrier, kF) == Approx(6.0));
  for (int i = 0; i < 3; ++i) CHECK(res[i].get(Metric::delay) == Approx(0.0).margin(1e-12));
}

TEST_CASE("late broadcast costs land on the root, early reduce costs on the latest sender", "[delay]") {
  auto r = make_ranks(3);
  // Bcast from root 1, which works 2 s more than the others.
  r[0].region(0.0, 1.0, kF);
  r[1].region(0.0, 3.0, kF);
  r[2].region(0.0, 1.0, kF);
  for (int i = 0; i < 3; ++i) {
    r[i].coll(i == 1 ? 3.0 : 1.0, 3.1, rt::kRegion_MPI_Bcast, 1, i == 1 ? 24 : 0, 8);
  }
  // Reduce to root 0; rank 2 works 1.5 s more (g) than the root.
  r[0].region(3.1, 3.6, kG);
  r[1].region(3.1, 3.6, kG);
  r[2].region(3.1, 5.1, kG);
  for (int i = 0; i < 3; ++i) {
    r[i].coll(i == 2 ? 5.1 : 3.6, 5.2, rt::kRegion_MPI_Reduce, 0, 8, i == 0 ? 24 : 0);
    r[i].leave(6.0);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latebroadcast) == Approx(2.0));
  CHECK(res[1].get(Metric::delay_12n, kF) == Approx(4.0));  // 2 s for each of ranks 0 and 2
  CHECK(res[0].get(Metric::mpi_earlyreduce) == Approx(1.5));
  CHECK(res[2].get(Metric::delay_n21, kG) == Approx(1.5));
}

TEST_CASE("a member the N x N pattern does not analyze still takes part in the instance's replay",
          "[delay][collective]") {
  // Rank 1 moves no data in the Allreduce (not analyzed for waiting), but
  // the pattern still publishes the instance as a synchronization point at
  // every member: the replay's broadcast and reduction need all three.
  // Rank 2 works 2 s more in f, so rank 0 waits 2 s and that is its cost.
  auto r = make_ranks(3);
  for (int i = 0; i < 3; ++i) {
    r[i].region(0.0, i == 2 ? 3.0 : 1.0, kF);
    r[i].coll(i == 2 ? 3.0 : 1.0, 3.1, rt::kRegion_MPI_Allreduce, -1, i == 1 ? 0 : 8, i == 1 ? 0 : 8);
    r[i].region(3.1, 3.5, kG);
    r[i].leave(4.0);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_nxn) == Approx(2.0));
  CHECK(res[1].get(Metric::mpi_wait_nxn) == 0.0);
  CHECK(res[2].get(Metric::delay_n2n, kF) == Approx(2.0));
  CHECK(res[2].get(Metric::delay) == Approx(2.0));
}
