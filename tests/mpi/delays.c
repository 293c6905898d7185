/* Root causes of wait states (delay costs, seed 000) on 4 ranks; the first
 * argument picks the scenario.  Each runs twice, after a barrier; the delays
 * are sleeps inside the user region "delay_work", so the costs must land
 * there, on the rank that sleeps.
 *
 *   chain     rank 0 sleeps 0.4 s in delay_work, then sends to 1; ranks 1 and 2
 *             forward at once.  Ranks 1, 2, 3 each wait 0.4 s (Late Sender).
 *             Costs on rank 0's delay_work: 0.4 s short-term (rank 1's wait),
 *             0.8 s long-term (ranks 2 and 3, through propagation), per run.
 *             Rank 1's wait is direct and propagating, rank 3's indirect and
 *             terminal.
 *   barrier   rank r sleeps 0.1 r s in delay_work, then MPI_Barrier: waits
 *             0.3, 0.2, 0.1 s; all 0.6 s are short-term costs on rank 3.
 *   bcast     root 2 sleeps 0.3 s, then MPI_Bcast: 3 x 0.3 s on the root.
 *   reduce    rank 3 sleeps 0.3 s before MPI_Reduce to root 0: the root's
 *             0.3 s Early Reduce is charged to rank 3 (the latest sender).
 *   receiver  rank 1 sleeps 0.3 s, then receives 1 MiB that rank 0 sends with
 *             MPI_Send (rendezvous): 0.3 s Late Receiver, charged to rank 1.
 */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "chain";
  const int n = 1 << 17;
  double* buf = calloc((size_t)n, sizeof(double));
  for (int it = 0; it < 2; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "chain") == 0) {
      if (rank == 0) region_sleep("delay_work", 0.4);
      if (rank > 0) MPI_Recv(buf, 8, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank < size - 1) MPI_Send(buf, 8, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    } else if (strcmp(mode, "barrier") == 0) {
      region_sleep("delay_work", 0.1 * rank);
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "bcast") == 0) {
      if (rank == 2) region_sleep("delay_work", 0.3);
      MPI_Bcast(buf, 8, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    } else if (strcmp(mode, "reduce") == 0) {
      if (rank == 3) region_sleep("delay_work", 0.3);
      MPI_Reduce(buf, buf + 8, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (strcmp(mode, "receiver") == 0) {
      if (rank == 1) {
        region_sleep("delay_work", 0.3);
        MPI_Recv(buf, n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 0) {
        MPI_Send(buf, n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  MPI_Finalize();
  return 0;
}
