/* Step 4 benchmarks (run_step4.py), with and without onlinews:
 *   ring N      N iterations of an 8-byte MPI_Irecv/MPI_Isend/MPI_Waitall
 *               ring (issue 7: 500 000 iterations on 2 ranks, ~0.14 s plain);
 *   epochs N    N iterations of a 1 ms sleep and an 8-byte MPI_Allreduce:
 *               with ONLINEWS_EPOCH_SECONDS=0 every allreduce is a cut, so
 *               (loop with - loop without) / N is what an epoch costs the
 *               application.
 * Every rank times MPI_Init (clock_gettime around it); rank 0 prints the
 * loop time (MPI_Wtime between barriers) and the largest MPI_Init time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const double t_init = now_s();
  MPI_Init(&argc, &argv);
  double init = now_s() - t_init, init_max = 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "ring";
  const long n = argc > 2 ? atol(argv[2]) : 500000;
  double out = rank, in = 0, sum = 0;
  MPI_Reduce(&init, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (strcmp(mode, "epochs") == 0) {
    const struct timespec ms = {0, 1000000};
    for (long i = 0; i < n; ++i) {
      nanosleep(&ms, NULL);
      MPI_Allreduce(&out, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (long i = 0; i < n; ++i) {
      MPI_Request r[2];
      MPI_Irecv(&in, 1, MPI_DOUBLE, prev, 0, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(&out, 1, MPI_DOUBLE, next, 0, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
      out = in + 1;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double loop = MPI_Wtime() - t0;
  if (rank == 0) printf("loop %.6f init %.6f\n", loop, init_max);
  MPI_Finalize();
  return 0;
}
