// Collective wait states: barrier, N x N, broadcast, reduce, scan,
// init/finalize, counts.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("barrier wait and completion", "[collective][barrier]") {
  // Ranks enter at 1, 2, 3, 4 and leave at 4.0, 4.1, 4.2, 4.3.
  auto r = make_ranks(4);
  for (int i = 0; i < 4; ++i) r[i].coll(1.0 + i, 4.0 + 0.1 * i, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  for (int i = 0; i < 4; ++i) {
    CHECK(res[i].get(Metric::mpi_barrier_wait) == Approx(3.0 - i));
    CHECK(res[i].get(Metric::mpi_barrier_completion) == Approx(0.1 * i).margin(1e-9));
    CHECK(res[i].get(Metric::syncs_coll) == 1.0);
  }
}

TEST_CASE("wait at N x N in Allreduce", "[collective][nxn]") {
  auto r = make_ranks(3);
  r[0].coll(2.0, 5.0, rt::kRegion_MPI_Allreduce, -1, 24, 24);
  r[1].coll(4.5, 5.0, rt::kRegion_MPI_Allreduce, -1, 24, 24);
  r[2].coll(1.0, 5.2, rt::kRegion_MPI_Allreduce, -1, 24, 24);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_wait_nxn) == Approx(2.5));
  CHECK(res[1].get(Metric::mpi_wait_nxn) == 0.0);
  CHECK(res[2].get(Metric::mpi_wait_nxn) == Approx(3.5));
  CHECK(res[2].get(Metric::mpi_nxn_completion) == Approx(0.2));
  CHECK(res[0].get(Metric::comms_cxch) == 1.0);
  CHECK(res[0].get(Metric::bytes_cout) == 24.0);
}

TEST_CASE("late broadcast: non-roots wait for the root", "[collective][bcast]") {
  // Root is rank 2 and enters at 5; the others enter at 1, 2, 5.5.
  auto r = make_ranks(4);
  const double enter[4] = {1.0, 2.0, 5.0, 5.5};
  for (int i = 0; i < 4; ++i) {
    r[i].coll(enter[i], 6.0, rt::kRegion_MPI_Bcast, 2, i == 2 ? 32 : 0, 8);
  }
  for (auto& v : r) v.leave(7.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latebroadcast) == Approx(4.0));
  CHECK(res[1].get(Metric::mpi_latebroadcast) == Approx(3.0));
  CHECK(res[2].get(Metric::mpi_latebroadcast) == 0.0);
  CHECK(res[3].get(Metric::mpi_latebroadcast) == 0.0);
  CHECK(res[0].get(Metric::comms_cdst) == 1.0);
  CHECK(res[2].get(Metric::comms_cxch) == 1.0);
}

TEST_CASE("early reduce: the root waits for the latest sender", "[collective][reduce]") {
  // Root 0 enters at 1; the others at 2, 6 and 4: it waits 5 s.
  auto r = make_ranks(4);
  const double enter[4] = {1.0, 2.0, 6.0, 4.0};
  for (int i = 0; i < 4; ++i) r[i].coll(enter[i], 6.5, rt::kRegion_MPI_Reduce, 0, 8, i == 0 ? 32 : 0);
  for (auto& v : r) v.leave(7.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_earlyreduce) == Approx(5.0));
  for (int i = 1; i < 4; ++i) CHECK(res[i].get(Metric::mpi_earlyreduce) == 0.0);
  CHECK(res[1].get(Metric::comms_csrc) == 1.0);
}

TEST_CASE("early scan: each rank waits for the latest lower rank", "[collective][scan]") {
  auto r = make_ranks(4);
  const double enter[4] = {4.0, 1.0, 3.0, 2.0};
  for (int i = 0; i < 4; ++i) r[i].coll(enter[i], 4.5, rt::kRegion_MPI_Scan, -1, 8, 8);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_earlyscan) == 0.0);
  CHECK(res[1].get(Metric::mpi_earlyscan) == Approx(3.0));
  CHECK(res[2].get(Metric::mpi_earlyscan) == Approx(1.0));
  CHECK(res[3].get(Metric::mpi_earlyscan) == Approx(2.0));
}

TEST_CASE("init completion and finalize wait", "[collective][init]") {
  // MPI_Init: leaves at 0.2, 0.5, 0.3 -> completion after the first leave
  // (0.2): 0, 0.3, 0.1.  MPI_Finalize entered at 1, 2, 3 -> waits 2, 1, 0.
  auto r = make_ranks(3);
  const double init_leave[3] = {0.2, 0.5, 0.3};
  for (int i = 0; i < 3; ++i) {
    r[i].coll(0.0, init_leave[i], rt::kRegion_MPI_Init, -1, 0, 0);
    r[i].coll(1.0 + i, 3.1, rt::kRegion_MPI_Finalize, -1, 0, 0);
    r[i].leave(3.1);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_init_completion) == Approx(0.0).margin(1e-9));
  CHECK(res[1].get(Metric::mpi_init_completion) == Approx(0.3));
  CHECK(res[2].get(Metric::mpi_init_completion) == Approx(0.1));
  CHECK(res[0].get(Metric::mpi_finalize_wait) == Approx(2.0));
  CHECK(res[1].get(Metric::mpi_finalize_wait) == Approx(1.0));
  CHECK(res[2].get(Metric::mpi_finalize_wait) == 0.0);
  CHECK(res[0].get(Metric::syncs_coll) == 0.0);  // Init/Finalize are not counted
}

TEST_CASE("collectives on a sub-communicator", "[collective]") {
  // Ranks 1 and 3 form a communicator (gid 77); rank 0 and 2 do nothing.
  auto r = make_ranks(4);
  for (auto& v : r) v.add_comm(77, {1, 3});
  r[1].coll(1.0, 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0, 1);
  r[3].coll(2.5, 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0, 1);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_barrier_wait) == Approx(1.5));
  CHECK(res[3].get(Metric::mpi_barrier_wait) == 0.0);
}
