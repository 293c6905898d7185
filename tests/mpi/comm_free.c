/* Communicators freed before the epoch that replays them, 4 ranks, run with
 * ONLINEWS_EPOCH_SECONDS=0 (every world barrier is a cut).
 *
 * Three iterations: split WORLD by parity into {0,2} and {1,3}; in each
 * half, rank r sleeps 0.1 r and enters MPI_Barrier on the half: ranks 0 and
 * 1 wait 0.2 s (for ranks 2 and 3).  Then sub-rank 1 sleeps 0.15 s and sends
 * to sub-rank 0, which waits 0.15 s in MPI_Recv.  The half is freed, and
 * only then does the world barrier (the cut) start the epoch that analyzes
 * those events.  Totals on ranks 0 and 1: 0.6 s barrier wait, 0.45 s Late
 * Sender, under the user region "subcomm".
 * Then 30 iterations of MPI_Comm_dup + MPI_Allreduce + MPI_Comm_free, to
 * recycle the tool's communicator slots; they add no waits (no sleeps).
 */
#include "onlinews.h"
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  for (int it = 0; it < 3; ++it) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int sub;
    MPI_Comm_rank(half, &sub);
    onlinews_region_begin("subcomm");
    sleep_s(0.1 * rank);
    MPI_Barrier(half);
    int x = it;
    if (sub == 1) {
      sleep_s(0.15);
      MPI_Send(&x, 1, MPI_INT, 0, 0, half);
    } else {
      MPI_Recv(&x, 1, MPI_INT, 1, 0, half, MPI_STATUS_IGNORE);
    }
    onlinews_region_end("subcomm");
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int it = 0; it < 30; ++it) {
    MPI_Comm c;
    int one = 1, sum = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    MPI_Comm_free(&c);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
