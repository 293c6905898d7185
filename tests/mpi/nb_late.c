/* Nonblocking and neighborhood collectives analyzed at their completion
 * (issue 14).  4 ranks, sleep-driven; each phase is repeated 3 times.
 *
 * A  MPI_Iallreduce on WORLD: rank 3 sleeps 0.3 s in region "late" before it
 *    starts; the others start at once, overlap 0.1 s of work (region
 *    "overlap") and enter MPI_Wait.  Ranks 0-2 wait 0.3 - 0.1 = 0.2 s per
 *    round in MPI_Wait (mpi_wait_nxn_nb: 0.6 s each), rank 3 none; the
 *    delay is rank 3's "late" (delay_n2n there: 3 x 0.6 = 1.8 s with the
 *    long-term costs).
 * B  MPI_Ibcast from root 1, which sleeps 0.25 s ("late") first: ranks 0, 2
 *    and 3 wait 0.25 s per round in MPI_Wait (mpi_latebroadcast_nb: 0.75 s
 *    each), root none.
 * C  MPI_Neighbor_alltoall on a 2 x 2 Cartesian grid, not periodic (rank r
 *    at row r / 2, column r % 2): rank 3 sleeps 0.3 s ("late") first.  Its
 *    neighbors 1 and 2 wait 0.3 s per round (mpi_wait_neighbor: 0.9 s each);
 *    rank 0, not its neighbor, waits for nobody (its neighbors 1 and 2 came
 *    at once); rank 3 none.
 * D  An MPI_Iallreduce on a duplicate of WORLD that crosses a cut: ranks 0,
 *    1 and 3 start it, then all call MPI_Barrier on WORLD (a synchronizing
 *    cut with ONLINEWS_EPOCH_SECONDS=0); rank 2 sleeps 0.2 s ("late")
 *    after the barrier and only then starts.  Ranks 0, 1 and 3 wait 0.2 s
 *    per round in MPI_Wait after the barrier.  With A: mpi_wait_nxn_nb is
 *    0.6 + 0.6 = 1.2 s on ranks 0 and 1, 0.6 s on rank 2 (A) and on rank 3
 *    (D).  Every one of these waits is explained by the late rank's sleep:
 *    the short-term delay_n2n of all ranks sums to the 3.6 s of waiting.
 * E  Once, collective-free: ranks 0, 2 and 3 start an MPI_Iallreduce on the
 *    duplicate, overlap 12 x 0.1 s of work ("overlap", each followed by an
 *    MPI_Iprobe) and wait; rank 1 sleeps 1.5 s ("late") before it starts.
 *    Ranks 0, 2 and 3 wait 1.5 - 1.2 = 0.3 s more: mpi_wait_nxn_nb is 1.5 s on rank 0,
 *    1.2 s on rank 1, 0.9 s on ranks 2 and 3 in all.
 * Every result is checked (exit code 3 if wrong). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario.h"

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "nb_late: wrong result of %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "nb_late: needs 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int dims[2] = {2, 2}, periods[2] = {0, 0};
  MPI_Comm grid, dup;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Request r;
  for (int round = 0; round < 3; ++round) {
    /* A */
    int sum = 0;
    if (rank == 3) region_sleep("late", 0.3);
    MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    if (rank != 3) region_sleep("overlap", 0.1);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(sum == 6, "MPI_Iallreduce");
    /* B */
    int value = rank == 1 ? 42 + round : -1;
    if (rank == 1) region_sleep("late", 0.25);
    MPI_Ibcast(&value, 1, MPI_INT, 1, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(value == 42 + round, "MPI_Ibcast");
    /* C: each neighbor's slot gets its rank (MPI_PROC_NULL slots stay -1) */
    int out[4] = {rank, rank, rank, rank}, in[4] = {-1, -1, -1, -1};
    if (rank == 3) region_sleep("late", 0.3);
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, grid);
    int got = 0;
    for (int i = 0; i < 4; ++i) got += in[i] >= 0;
    check(got == 2, "MPI_Neighbor_alltoall");
    /* D */
    sum = 0;
    if (rank != 2) MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2) {
      region_sleep("late", 0.2);
      MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(sum == 6, "MPI_Iallreduce across the barrier");
  }
  /* E */
  int sum = 0;
  if (rank == 1) region_sleep("late", 1.5);
  MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup, &r);
  for (int k = 0; k < 12 && rank != 1; ++k) {
    int flag = 0;
    region_sleep("overlap", 0.1);
    MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(sum == 6, "MPI_Iallreduce across a requested cut");
  MPI_Comm_free(&dup);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
