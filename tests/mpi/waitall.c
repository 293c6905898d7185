/* Nonblocking receives completed by MPI_Waitall, 4 ranks, 3 iterations.
 *
 * Rank 0 posts MPI_Irecv from ranks 1..3 and waits in MPI_Waitall.  Rank r
 * sleeps 0.1 * r s, then MPI_Isend + MPI_Wait.  Rank 0 waits for the latest
 * sender, rank 3: 0.3 s per iteration, one Late Sender instance per Waitall.
 * Totals: 0.9 s and 3 instances on rank 0 (call path MPI_Waitall).
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  int data[4] = {0, 0, 0, 0};
  for (int it = 0; it < 3; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Request req[3];
      for (int r = 1; r < size; ++r) MPI_Irecv(&data[r], 1, MPI_INT, r, it, MPI_COMM_WORLD, &req[r - 1]);
      MPI_Waitall(size - 1, req, MPI_STATUSES_IGNORE);
    } else {
      MPI_Request req;
      sleep_s(0.1 * rank);
      MPI_Isend(&rank, 1, MPI_INT, 0, it, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
