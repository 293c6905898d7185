/* MPI_T message queues, sampled at every cut (queues.expect runs it with
 * ONLINEWS_MPI_T_PVARS=queues and ONLINEWS_EPOCH_SECONDS=0: a cut at every
 * MPI_Barrier).  2 ranks.  Before the first barrier rank 0 sends 5 small
 * (eager) messages with tag 1 that rank 1 receives only after it, and rank 1
 * posts 3 receives with tag 2 that rank 0 sends only after it: at that cut
 * rank 1's unexpected queue holds 5 messages and its posted queue 3
 * receives (Open MPI delivers a pair's messages in order, so the 5 have
 * arrived when rank 0's part of the barrier has); rank 0's queues are
 * empty.  After the second barrier every queue is empty.
 * A rank samples its queues right after its part of the barrier, but rank
 * 0 may leave a barrier before rank 1 has sampled: its next messages (and
 * the next barrier's) then reach rank 1 first.  Under load that happened
 * (rank 1's queues at the second cut: 6 unexpected, the 5 and the third
 * barrier's, and no posted receive, their messages arrived), so rank 0
 * sleeps 0.2 s after each barrier before it sends. */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  double buf[8] = {0};
  MPI_Request posted[3];
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_s(0.2);
    for (int i = 0; i < 5; ++i) MPI_Send(buf, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    for (int i = 0; i < 3; ++i) MPI_Irecv(&buf[i], 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &posted[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_s(0.2);
    for (int i = 0; i < 3; ++i) MPI_Send(buf, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
  } else if (rank == 1) {
    for (int i = 0; i < 5; ++i) MPI_Recv(&buf[4], 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(3, posted, MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
