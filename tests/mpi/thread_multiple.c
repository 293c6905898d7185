/* MPI_THREAD_MULTIPLE: two threads per rank exchange messages at once
 * (issue 9).  Ranks 0 and 1 each start two threads, k = 1 and 2, that run
 * at the same time; the main threads only meet in MPI_Barrier before and
 * after.  ITERS = 4 iterations per thread.
 *
 *   tags  thread k of rank 0 sleeps D_k in user region "work<k>" (D_1 = 0.05
 *         s, D_2 = 0.1 s), sends to rank 1 on tag k and receives the reply;
 *         thread k of rank 1, inside user region "recv<k>", receives on tag
 *         k (from MPI_ANY_SOURCE on odd iterations, the actual source and tag
 *         then come from the status) and replies at once.  The envelopes
 *         differ, so every message is matched exactly although the threads'
 *         calls overlap: rank 1's thread k waits D_k per iteration (Late
 *         Sender under recv<k>: 4 x 0.05 = 0.2 s and 4 x 0.1 = 0.4 s), and
 *         the delay costs fall on rank 0's work<k> in full (0.2 s and 0.4 s):
 *         each thread's synchronization intervals run from its own previous
 *         message, not from the other thread's.
 *   same  both threads of rank 0 sleep 0.05 s and send on tag 7, both
 *         threads of rank 1 receive on tag 7 at once: MPI may pair the two
 *         threads' messages either way, so all 8 are matched (counts stay
 *         aligned) but not analyzed: ambiguous_messages == 8, no Late Sender.
 *
 * Usage: thread_multiple [tags|same] */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"

#define ITERS 4
static int same = 0;

static void* worker(void* arg) {
  const int k = (int)(long)arg;
  const int rank = world_rank();
  const int tag = same ? 7 : k;
  const double delay = same ? 0.05 : 0.05 * k;
  char region[16];
  double buf = 0;
  snprintf(region, sizeof region, "%s%d", rank == 0 ? "work" : "recv", k);
  if (rank == 1) onlinews_region_begin(region);
  for (int i = 0; i < ITERS; ++i) {
    if (rank == 0) {
      region_sleep(region, delay);
      MPI_Send(&buf, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD);
      if (!same) MPI_Recv(&buf, 1, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Status st;
      MPI_Recv(&buf, 1, MPI_DOUBLE, i % 2 ? MPI_ANY_SOURCE : 0, tag, MPI_COMM_WORLD, &st);
      if (st.MPI_SOURCE != 0 || st.MPI_TAG != tag) fprintf(stderr, "thread %d: wrong status\n", k);
      if (!same) MPI_Send(&buf, 1, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD);
    }
  }
  if (rank == 1) onlinews_region_end(region);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  same = argc > 1 && strcmp(argv[1], "same") == 0;
  if (provided != MPI_THREAD_MULTIPLE) {
    if (world_rank() == 0) fprintf(stderr, "thread_multiple: needs MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() < 2) {
    pthread_t th[2];
    for (long k = 1; k <= 2; ++k) pthread_create(&th[k - 1], NULL, worker, (void*)k);
    for (int k = 0; k < 2; ++k) pthread_join(th[k], NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
