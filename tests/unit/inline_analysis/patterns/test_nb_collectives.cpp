// Nonblocking and neighborhood collectives: waits at completion, their
// delay costs, instances across cuts, calls that complete several.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Ranks 0 and 1 work until 1.0, start an Iallreduce, overlap 1 s of work and
// wait from 2.0; rank 2 works until 3.5 before it starts.  All complete at
// 4.0.  So ranks 0 and 1 wait 3.5 - 2.0 = 1.5 s each in MPI_Wait, and rank
// 2's 1.5 s of extra work explains both (delay_n2n 3.0 s on rank 2).  A
// barrier follows, rank 0 the last to enter it.
std::vector<VRank> late_iallreduce() {
  auto r = make_ranks(3);
  for (int i = 0; i < 3; ++i) {
    const double start = i == 2 ? 3.5 : 1.0;
    r[i].region(0.0, start, kWork);
    r[i].istart(start, start + 0.01, rt::kRegion_MPI_Iallreduce, 7);
    const double wait = i == 2 ? 3.6 : 2.0;
    r[i].region(start + 0.01, wait, kWork);
    r[i].icomplete(wait, 4.0, rt::kRegion_MPI_Wait, {7});
    r[i].coll(4.1 + 0.01 * (2 - i), 4.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
  }
  for (auto& v : r) v.leave(4.3);
  return r;
}

}  // namespace

TEST_CASE("Iallreduce started late: the others wait in MPI_Wait", "[collective][nonblocking]") {
  auto r = late_iallreduce();
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb, rt::kRegion_MPI_Wait) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_wait_nxn_nb, rt::kRegion_MPI_Wait) == Approx(1.5));
  CHECK(res[2].get(Metric::mpi_wait_nxn_nb) == 0.0);
  CHECK(res[0].get(Metric::mpi_wait_nxn) == 0.0);  // (not a blocking wait)
  // The latest starter's excess work caused both waits.
  CHECK(res[2].get(Metric::delay_n2n, kWork) == Approx(3.0).margin(0.02));
  CHECK(res[0].get(Metric::delay_n2n) == Approx(0.0).margin(1e-9));
  CHECK(res[0].get(Metric::comms_cxch) == 1.0);
  CHECK(res[0].get(Metric::bytes_cin, rt::kRegion_MPI_Wait) == 8.0);
  // The path ends on rank 0 (last into the barrier), leaves it where its
  // wait ended (3.5) for rank 2's start: rank 2's work before is on it.
  CHECK(res[2].get(Metric::critical_path, kWork) == Approx(3.5).margin(1e-6));
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(0.0).margin(1e-6));
}

TEST_CASE("a nonblocking instance across cuts is analyzed in the later epoch", "[collective][nonblocking][epochs]") {
  auto one = late_iallreduce();
  auto ref = replay(one);
  // A requested cut at 3.0 falls between the starts (ranks 0 and 1 started
  // at 1.0, rank 2 starts at 3.5); one at 2.5 between rank 0's start and its
  // completion.
  for (double cut : {2.5, 3.0}) {
    auto r = late_iallreduce();
    for (auto& v : r) v.requested_cut_at(cut);
    auto res = replay(r);
    for (int i = 0; i < 3; ++i) {
      CHECK(res[i].get(Metric::mpi_wait_nxn_nb) == Approx(ref[i].get(Metric::mpi_wait_nxn_nb)).margin(1e-9));
    }
    CHECK(res[2].get(Metric::delay_n2n) == Approx(ref[2].get(Metric::delay_n2n)).margin(0.01 * 3.0));
  }
  // A synchronizing cut (a barrier at 1.1-1.2 on every rank, rank 2 before it
  // starts) between start and completion.
  auto r = make_ranks(3);
  for (int i = 0; i < 3; ++i) {
    if (i < 2) r[i].istart(1.0, 1.01, rt::kRegion_MPI_Iallreduce, 7);
    r[i].coll(1.1, 1.2, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[i].cut();
    if (i == 2) r[i].istart(3.0, 3.01, rt::kRegion_MPI_Iallreduce, 7);
    r[i].icomplete(i == 2 ? 3.1 : 2.0, 3.2, rt::kRegion_MPI_Wait, {7});
  }
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb) == Approx(1.0));
  CHECK(res[1].get(Metric::mpi_wait_nxn_nb) == Approx(1.0));
  CHECK(res[2].get(Metric::mpi_wait_nxn_nb) == 0.0);
}

TEST_CASE("Ibcast with a late root; Ireduce with a late sender", "[collective][nonblocking]") {
  // Root 1 starts the Ibcast at 3.0; ranks 0 and 2 started at 0.5 and wait
  // from 1.0 and 2.5: 2.0 and 0.5 s.  Then an Ireduce to root 0 that rank 2
  // starts late (6.0; the others at 5.0), the root waits from 5.5: 0.5 s.
  auto r = make_ranks(3);
  const double wait_at[3] = {1.0, 3.1, 2.5};
  for (int i = 0; i < 3; ++i) {
    const double s = i == 1 ? 3.0 : 0.5;
    r[i].istart(s, s + 0.01, rt::kRegion_MPI_Ibcast, 1, 1, i == 1 ? 16 : 0, i != 1);
    r[i].icomplete(wait_at[i], 3.2, rt::kRegion_MPI_Wait, {1});
    const double s2 = i == 2 ? 6.0 : 5.0;
    r[i].istart(s2, s2 + 0.01, rt::kRegion_MPI_Ireduce, 2, 0, 8, i == 0);
    r[i].icomplete(i == 0 ? 5.5 : 6.1, 6.2, rt::kRegion_MPI_Wait, {2});
  }
  for (auto& v : r) v.leave(7.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latebroadcast_nb) == Approx(2.0));
  CHECK(res[1].get(Metric::mpi_latebroadcast_nb) == 0.0);
  CHECK(res[2].get(Metric::mpi_latebroadcast_nb) == Approx(0.5));
  CHECK(res[0].get(Metric::mpi_earlyreduce_nb) == Approx(0.5));
  CHECK(res[1].get(Metric::mpi_earlyreduce_nb) == 0.0);
  CHECK(res[2].get(Metric::mpi_earlyreduce_nb) == 0.0);
  CHECK(res[1].get(Metric::delay_12n) + res[1].get(Metric::delay_12n_longterm) > 0.0);
}

TEST_CASE("neighborhood collective on a 2 x 2 grid: only neighbors wait", "[collective][neighbor]") {
  // Ranks (row, column) = (r / 2, r % 2), not periodic: 0 and 3 are not
  // neighbors.  Rank 3 enters MPI_Neighbor_alltoall at 3.0, the others at
  // 1.0; all leave at 3.1.  Ranks 1 and 2 wait 2.0 s; rank 0 waits for 1 and
  // 2 only, who came at 1.0.
  auto r = make_ranks(4);
  const std::vector<std::vector<int>> nb = {{-1, 2, -1, 1}, {-1, 3, 0, -1}, {0, -1, -1, 3}, {1, -1, 2, -1}};
  for (int i = 0; i < 4; ++i) {
    const std::uint16_t cart = r[i].add_topology(2, nb[i], nb[i]);
    r[i].region(0.0, i == 3 ? 3.0 : 1.0, kWork);
    r[i].neighbor(i == 3 ? 3.0 : 1.0, 3.1, rt::kRegion_MPI_Neighbor_alltoall, cart, 16, 16);
    // And a nonblocking one, completed in MPI_Wait, that rank 0 starts late.
    r[i].istart(i == 0 ? 5.0 : 4.0, (i == 0 ? 5.0 : 4.0) + 0.01, rt::kRegion_MPI_Ineighbor_alltoall, 9, -1, 16, true,
                cart);
    r[i].icomplete(i == 0 ? 5.1 : 4.5, 5.2, rt::kRegion_MPI_Wait, {9}, cart, 16);
  }
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_neighbor) == 0.0);
  CHECK(res[1].get(Metric::mpi_wait_neighbor) == Approx(2.0));
  CHECK(res[2].get(Metric::mpi_wait_neighbor) == Approx(2.0));
  CHECK(res[3].get(Metric::mpi_wait_neighbor) == 0.0);
  CHECK(res[3].get(Metric::delay_neighbor, kWork) == Approx(4.0).margin(0.01));
  CHECK(res[0].get(Metric::mpi_wait_neighbor_nb) == 0.0);
  CHECK(res[1].get(Metric::mpi_wait_neighbor_nb) == Approx(0.5));
  CHECK(res[2].get(Metric::mpi_wait_neighbor_nb) == Approx(0.5));
  CHECK(res[3].get(Metric::mpi_wait_neighbor_nb) == 0.0);
  CHECK(res[0].get(Metric::bytes_cout) == 32.0);
}

TEST_CASE("a Waitall completing two instances waits once", "[collective][nonblocking]") {
  // Rank 1 starts an Ibarrier at 2.0 and an Iallreduce at 3.0; rank 0
  // started both at 0.5 and completes both in one Waitall from 1.0: it
  // waited 2.0 s (for the later start), charged to the Iallreduce.
  auto r = make_ranks(2);
  for (int i = 0; i < 2; ++i) {
    r[i].istart(i == 1 ? 2.0 : 0.5, (i == 1 ? 2.0 : 0.5) + 0.01, rt::kRegion_MPI_Ibarrier, 3, -1, 0, false);
    r[i].istart(i == 1 ? 3.0 : 0.6, (i == 1 ? 3.0 : 0.6) + 0.01, rt::kRegion_MPI_Iallreduce, 4);
    r[i].icomplete(i == 1 ? 3.1 : 1.0, 3.2, rt::kRegion_MPI_Waitall, {3, 4});
  }
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb) + res[0].get(Metric::mpi_barrier_wait_nb) == Approx(2.0));
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb) == Approx(2.0));
  CHECK(res[0].get(Metric::syncs_coll) == 1.0);
}

TEST_CASE("nonblocking instances after a window that lost events", "[collective][nonblocking][epochs]") {
  // Window 1 (rank 0 lost events in it: communication not analyzed) has one
  // Iallreduce; after the barrier's cut, rank 1 starts a second one at 3.0
  // that rank 0 waits for from 2.0.  The runtime numbers the starts, so the
  // second instance pairs up on both ranks: 1.0 s.
  auto r = make_ranks(2);
  for (int i = 0; i < 2; ++i) {
    r[i].istart(0.5, 0.51, rt::kRegion_MPI_Iallreduce, 1);
    r[i].icomplete(0.6, 0.7, rt::kRegion_MPI_Wait, {1});
    r[i].coll(1.0, 1.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[i].cut();
    r[i].istart(i == 1 ? 3.0 : 1.5, (i == 1 ? 3.0 : 1.5) + 0.01, rt::kRegion_MPI_Iallreduce, 2);
    r[i].icomplete(i == 1 ? 3.1 : 2.0, 3.2, rt::kRegion_MPI_Wait, {2});
  }
  r[0].dropped = 5;
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].facts[0].comm_analysis_skipped);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb) == Approx(1.0));
  CHECK(res[1].get(Metric::mpi_wait_nxn_nb) == 0.0);
}

TEST_CASE("neighborhood and other nonblocking collectives on one communicator", "[collective][neighbor]") {
  // A periodic ring of 3 (each rank's neighbors: the other two): an
  // Ineighbor_allgather all start at 1.0, then an Iallreduce on the same
  // communicator that rank 1 starts at 4.0 (the others at 2.0, waiting from
  // 2.5), then a Test* that completes a third instance, late too: no wait.
  auto r = make_ranks(3);
  for (int i = 0; i < 3; ++i) {
    const std::vector<int> ring = {(i + 2) % 3, (i + 1) % 3};
    const std::uint16_t c = r[i].add_topology(5, ring, ring);
    r[i].istart(1.0, 1.01, rt::kRegion_MPI_Ineighbor_allgather, 1, -1, 16, true, c);
    r[i].icomplete(1.1, 1.2, rt::kRegion_MPI_Wait, {1}, c);
    r[i].istart(i == 1 ? 4.0 : 2.0, (i == 1 ? 4.0 : 2.0) + 0.01, rt::kRegion_MPI_Iallreduce, 2, -1, 8, true, c);
    r[i].icomplete(i == 1 ? 4.1 : 2.5, 4.2, rt::kRegion_MPI_Wait, {2}, c);
    r[i].istart(i == 1 ? 5.0 : 4.5, (i == 1 ? 5.0 : 4.5) + 0.01, rt::kRegion_MPI_Iallreduce, 3, -1, 8, true, c);
    r[i].enter(i == 1 ? 5.1 : 5.05, rt::kRegion_MPI_Test);
    r[i].events.push_back(Event::message(EventKind::CollComplete, ns(5.2), c, -1, 0, 8, 3, evflag::kByTest));
    r[i].leave(5.2);
  }
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_neighbor_nb) == 0.0);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb) == Approx(1.5));
  CHECK(res[2].get(Metric::mpi_wait_nxn_nb) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_wait_nxn_nb) == 0.0);
  CHECK(res[0].get(Metric::mpi_wait_nxn_nb, rt::kRegion_MPI_Test) == 0.0);
}
