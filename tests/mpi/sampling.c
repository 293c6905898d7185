/* Sampling (ONLINEWS_SAMPLING), built without onlinews and run under
 * LD_PRELOAD.  2 ranks.  Rank 0 calibrates a busy loop, then 20 times runs
 * work_a() (38 ms of the loop) and work_b() (19 ms of it: half of work_a's
 * iterations; not multiples of the kernel's 4 ms tick, so that where the
 * samples fall in a call varies between iterations) and sends to rank 1,
 * which receives.  It measures the wall
 * time of both functions itself (CLOCK_MONOTONIC around each call) and
 * prints "measured work_a <s> work_b <s>": the known split, 2:1 by
 * construction and as the machine's load made it.  sampling.py checks that
 * computation, delay costs and the critical path are broken down into the
 * sampled functions work_a and work_b in that ratio (within 10 %). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static volatile double g_sink;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The busy loop, inlined into each function below with its own constants,
 * so that the instructions sampled lie in work_a and work_b themselves and
 * the compiler cannot fold the three into one function.  work_a and work_b
 * are not static, and the program exports its symbols: named also without
 * libdw (dladdr). */
__attribute__((always_inline)) static inline void loop(long n, double a, double b) {
  double x = g_sink;
  for (long i = 0; i < n; ++i) x = x * a + b * (double)i;
  g_sink = x;
}
__attribute__((noinline)) static void spin(long n) { loop(n, 0.999999, 1e-9); }
__attribute__((noinline)) void work_a(long n);
__attribute__((noinline)) void work_b(long n);
__attribute__((noinline)) void work_a(long n) { loop(n, 0.999998, 2e-9); }
__attribute__((noinline)) void work_b(long n) { loop(n, 0.999997, 3e-9); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double buf = 0;
  long per_ms = 0;
  if (rank == 0) {
    /* Loop iterations per millisecond: the fastest of 5 tries of 10 ms. */
    long n = 100000;
    for (int k = 0; k < 5; ++k) {
      const double t0 = now();
      spin(n);
      const double rate = (double)n / ((now() - t0) * 1e3);
      if ((long)rate > per_ms) per_ms = (long)rate;
      n = per_ms * 10;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double ta = 0, tb = 0;
  for (int it = 0; it < 20; ++it) {
    if (rank == 0) {
      double t0 = now();
      work_a(38 * per_ms);
      const double t1 = now();
      work_b(19 * per_ms);
      ta += t1 - t0;
      tb += now() - t1;
      MPI_Send(&buf, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("measured work_a %.6f work_b %.6f\n", ta, tb);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
