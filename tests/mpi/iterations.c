/* A multi-iteration program for "online equals post-mortem" (compare_epochs.py
 * runs it with ONLINEWS_EPOCH_SECONDS=0 -- a cut at every MPI_Allreduce, tens
 * of epochs -- and with inf -- one epoch -- and compares the totals).
 * 4 ranks, 20 iterations of:
 *   a chain 0 -> 1 -> 2 -> 3 (rank 0 sleeps 120 ms first, each relay 30 ms):
 *     Late Sender of up to 120, 150, 180 ms on ranks 1, 2, 3 (less where a
 *     rank comes late from the previous iteration's exchange);
 *   rank r sleeps 15 r ms, then MPI_Allreduce: N x N waits;
 *   every 5th iteration the root (iteration mod 4) sleeps 60 ms before an
 *     MPI_Bcast: Late Broadcast on the others;
 *   an Isend/Irecv exchange with the right neighbour completed by Waitall
 *     after rank-dependent sleeps (12 ms steps).
 * The two runs are two executions, so their waits differ by the sleeps'
 * jitter (about 0.1-0.3 ms per wait here); the waits are long enough that
 * this stays well below 0.5 %.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  double buf[8] = {0}, in[8] = {0}, out[8];
  for (int it = 0; it < 20; ++it) {
    if (rank > 0) MPI_Recv(buf, 8, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sleep_s(rank == 0 ? 0.120 : 0.030);
    if (rank < size - 1) MPI_Send(buf, 8, MPI_DOUBLE, rank + 1, 1, MPI_COMM_WORLD);
    sleep_s(0.015 * rank);
    MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (it % 5 == 4) {
      if (rank == it % size) sleep_s(0.060);
      MPI_Bcast(buf, 8, MPI_DOUBLE, it % size, MPI_COMM_WORLD);
    }
    MPI_Request req[2];
    MPI_Irecv(in, 8, MPI_DOUBLE, (rank + size - 1) % size, 2, MPI_COMM_WORLD, &req[0]);
    sleep_s(0.012 * ((rank + it) % size));
    MPI_Isend(out, 8, MPI_DOUBLE, (rank + 1) % size, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
