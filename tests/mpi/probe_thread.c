/* A probed message received on another thread (MPI_THREAD_MULTIPLE): rank 0's
 * main thread probes the message from rank 1 (waiting 0.2 s), a second thread
 * receives it.  Both threads' calls are analyzed: the probe is tied to the
 * receive of its message on the other thread and has the Late Sender
 * (probe_thread.expect). */
#include <pthread.h>
#include <stdio.h>

#include "scenario.h"

static void* receiver(void* arg) {
  double* buf = arg;
  MPI_Recv(buf, 4, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int rank = world_rank();
  double buf[4] = {0};
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    sleep_s(0.2);
    MPI_Send(buf, 4, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
  } else if (rank == 0 && provided == MPI_THREAD_MULTIPLE) {
    MPI_Status st;
    pthread_t t;
    MPI_Probe(1, 5, MPI_COMM_WORLD, &st);
    pthread_create(&t, NULL, receiver, buf);
    pthread_join(t, NULL);
  } else if (rank == 0) {
    MPI_Recv(buf, 4, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "no MPI_THREAD_MULTIPLE: received on the main thread\n");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
