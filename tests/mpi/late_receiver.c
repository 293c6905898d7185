/* Late Receiver on 2 ranks, three phases separated by barriers.
 *
 * 1. Rank 0 sends 1 MiB with MPI_Send (above any eager limit: rendezvous);
 *    rank 1 sleeps 0.4 s before posting the receive -> rank 0 waits 0.4 s.
 * 2. Rank 0 sends 8 bytes with MPI_Ssend; rank 1 sleeps 0.3 s first ->
 *    rank 0 waits 0.3 s.
 * 3. Rank 0 sends 64 bytes with MPI_Send (eager: returns at once); rank 1
 *    sleeps 0.2 s first -> no Late Receiver.
 * Total Late Receiver on rank 0: 0.7 s in 2 instances (both with data).
 */
#include <stdlib.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  const int n = 1 << 17; /* doubles: 1 MiB */
  double* buf = calloc((size_t)n, sizeof(double));
  const double sleeps[3] = {0.4, 0.3, 0.2};
  for (int phase = 0; phase < 3; ++phase) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      if (phase == 0) MPI_Send(buf, n, MPI_DOUBLE, 1, phase, MPI_COMM_WORLD);
      if (phase == 1) MPI_Ssend(buf, 1, MPI_DOUBLE, 1, phase, MPI_COMM_WORLD);
      if (phase == 2) MPI_Send(buf, 8, MPI_DOUBLE, 1, phase, MPI_COMM_WORLD);
    } else if (rank == 1) {
      sleep_s(sleeps[phase]);
      MPI_Recv(buf, n, MPI_DOUBLE, 0, phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  MPI_Finalize();
  return 0;
}
