/* Nonblocking and neighborhood collectives, every one of them (issue 14;
 * nb_late.c checks their wait states in detail).  2
 * ranks on a periodic line (MPI_Cart_create), so each is the other's
 * neighbour on both sides.  Every MPI-3.1 nonblocking collective the spec
 * did not wrap before, and the neighborhood ones, is called once and
 * completed by MPI_Wait; rank 0 sleeps 0.2 s before the first, so rank 1's
 * MPI_Wait of MPI_Iallgatherv holds at least 0.2 s (it needs rank 0's
 * data): MPI time, and a wait for rank 0's start (mpi_wait_nxn_nb).  Each call's results are checked (exit code 3 if wrong). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario.h"

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "nbcoll: wrong result of %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int dims[1] = {2}, periods[1] = {1};
  MPI_Comm line;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  const int peer = 1 - rank;
  int one[2] = {1, 1}, displs[2] = {0, 1}, mine[2] = {rank, rank}, got[4] = {-1, -1, -1, -1};
  MPI_Aint adispls[2] = {0, sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request r;
  /* (Aligned first: a rank that leaves MPI_Init 0.2 s after the other, as
   * on a loaded machine, would otherwise turn the wait around.) */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) sleep_s(0.2);

  MPI_Iallgatherv(&rank, 1, MPI_INT, got, one, displs, MPI_INT, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == 0 && got[1] == 1, "MPI_Iallgatherv");
  MPI_Ialltoallv(mine, one, displs, MPI_INT, got, one, displs, MPI_INT, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[peer] == peer, "MPI_Ialltoallv");
  const int bdispls[2] = {0, (int)sizeof(int)}; /* (alltoallw: in bytes) */
  MPI_Ialltoallw(mine, one, bdispls, types, got, one, bdispls, types, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[peer] == peer, "MPI_Ialltoallw");
  MPI_Igatherv(&rank, 1, MPI_INT, got, one, displs, MPI_INT, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(rank != 0 || (got[0] == 0 && got[1] == 1), "MPI_Igatherv");
  int from_root = -1;
  const int sendv[2] = {10, 11};
  MPI_Iscatterv(sendv, one, displs, MPI_INT, &from_root, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(from_root == 10 + rank, "MPI_Iscatterv");
  int sum = -1;
  MPI_Ireduce_scatter(one, &sum, one, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(sum == 2, "MPI_Ireduce_scatter");
  MPI_Ireduce_scatter_block(one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(sum == 2, "MPI_Ireduce_scatter_block");
  int ex = -1;
  MPI_Iexscan(&one[0], &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(rank == 0 || ex == 1, "MPI_Iexscan");

  /* Neighbourhood collectives on the line: two neighbours (both the peer). */
  MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, got, one, displs, MPI_INT, line);
  check(got[0] == peer && got[1] == peer, "MPI_Neighbor_allgatherv");
  MPI_Neighbor_alltoallw(mine, one, adispls, types, got, one, adispls, types, line);
  check(got[0] == peer && got[1] == peer, "MPI_Neighbor_alltoallw");
  MPI_Ineighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == peer && got[1] == peer, "MPI_Ineighbor_allgather");
  MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, got, one, displs, MPI_INT, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == peer && got[1] == peer, "MPI_Ineighbor_allgatherv");
  MPI_Ineighbor_alltoall(mine, 1, MPI_INT, got, 1, MPI_INT, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == peer && got[1] == peer, "MPI_Ineighbor_alltoall");
  MPI_Ineighbor_alltoallv(mine, one, displs, MPI_INT, got, one, displs, MPI_INT, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == peer && got[1] == peer, "MPI_Ineighbor_alltoallv");
  MPI_Ineighbor_alltoallw(mine, one, adispls, types, got, one, adispls, types, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  check(got[0] == peer && got[1] == peer, "MPI_Ineighbor_alltoallw");

  MPI_Comm_free(&line);
  MPI_Finalize();
  return 0;
}
