/* Inter-communicators pass through onlinews unchanged (issue 12 part 3):
 * 4 ranks split into the even and the odd ranks; MPI_Intercomm_create joins
 * the two halves; each even rank sends its world rank over it to the odd
 * rank with the same local rank, which checks it; MPI_Intercomm_merge makes
 * an intracommunicator again, on which an MPI_Allreduce sums the world ranks
 * (6).  onlinews records the two calls on the inter-communicator as time
 * only (untracked_calls >= 4: 2 sends and 2 receives; one summary line says
 * so) and analyzes the merged one.  Then, on MPI_COMM_WORLD, rank 0 sleeps
 * 0.2 s before it sends to rank 1: a Late Sender of 0.2 s at rank 1 (the
 * analysis goes on).  Exit code 3 if any result is wrong. */
#include <mpi.h>
#include <stdio.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  int size = 0, bad = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm half, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  /* local leader: rank 0 of each half; remote leader: world rank 1 or 0 */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 5, &inter);
  int local = 0, value = rank;
  MPI_Comm_rank(half, &local);
  if (rank % 2 == 0) {
    MPI_Send(&value, 1, MPI_INT, local, 6, inter);
  } else {
    MPI_Recv(&value, 1, MPI_INT, local, 6, inter, MPI_STATUS_IGNORE);
    if (value != rank - 1) bad |= 1;
  }
  MPI_Intercomm_merge(inter, rank % 2, &merged);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
  if (sum != 6) bad |= 2;
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  int x = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_s(0.2);
    MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  printf("rank %d inter-communicator: %s (%d)\n", rank, bad ? "WRONG" : "as without onlinews", bad);
  MPI_Finalize();
  return bad ? 3 : 0;
}
