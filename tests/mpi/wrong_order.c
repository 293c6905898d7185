/* Late Sender, Wrong Order on 3 ranks, two phases separated by barriers.
 *
 * Phase 1 (different sources): rank 1 sends to rank 2 at once (tag 1); rank
 * 0 sleeps 0.5 s, then sends to rank 2 (tag 0).  Rank 2 receives from rank 0
 * first: it waits 0.5 s (Late Sender) although rank 1's message, sent earlier,
 * was already there -> 0.5 s of Wrong Order, different source.
 *
 * Phase 2 (same source): rank 0 sends tag 5 at once, sleeps 0.3 s, sends
 * tag 6.  Rank 2 receives tag 6 first (waits 0.3 s), then tag 5, which was
 * sent earlier -> 0.3 s of Wrong Order, same source.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  int x = 42;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) MPI_Send(&x, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_s(0.5);
    MPI_Send(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  }
  if (rank == 2) {
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Send(&x, 1, MPI_INT, 2, 5, MPI_COMM_WORLD);
    sleep_s(0.3);
    MPI_Send(&x, 1, MPI_INT, 2, 6, MPI_COMM_WORLD);
  }
  if (rank == 2) {
    MPI_Recv(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
