/* A late-sender chain over 4 ranks, twice.
 *
 * Each iteration starts with a barrier.  Rank 0 sleeps 0.4 s and sends to
 * rank 1; rank i (1..2) receives from i-1, sleeps d_i and sends to i+1, with
 * d_1 = 0.1 s and d_2 = 0.2 s; rank 3 only receives.  All receives are posted
 * right after the barrier, so per iteration:
 *   rank 1 waits 0.4 s, rank 2 waits 0.4 + 0.1 = 0.5 s, rank 3 waits
 *   0.5 + 0.2 = 0.7 s  (MPI_Recv, Late Sender);
 * then everyone enters a barrier: rank 0 at 0.4, rank 1 at 0.5, ranks 2 and 3
 * at 0.7, so rank 0 waits 0.3 s and rank 1 0.2 s there.
 * Expected totals over 2 iterations: late_sender_chain.expect.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const double delay[4] = {0.4, 0.1, 0.2, 0.0};
  double payload[16] = {0};
  for (int it = 0; it < 2; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) MPI_Recv(payload, 16, MPI_DOUBLE, rank - 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sleep_s(delay[rank]);
    if (rank < size - 1) MPI_Send(payload, 16, MPI_DOUBLE, rank + 1, it, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
