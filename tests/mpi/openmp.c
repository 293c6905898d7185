/* OpenMP constructs under OMPT: each rank runs a team of 4 threads
 * (OMP_NUM_THREADS=4), sleep-driven so that the times are exact even with
 * more threads than cores.  Built with GCC and linked with LLVM's libomp
 * (openmp), or with GCC's libgomp (openmp_gomp: no OMPT).  Modes:
 *   imbalance  2 iterations: thread t sleeps 0.1 (t + 1) s in "work", then
 *              the parallel region's implicit barrier, where thread t waits
 *              (0.3 - 0.1 t) s; between them the master sleeps 0.2 s in
 *              "serial".  An explicit barrier follows every iteration's
 *              work once more after 0.05 t s ("late"): thread t waits
 *              (0.15 - 0.05 t) s there.
 *   critical   every thread enters one critical section and holds it
 *              0.05 s: the k-th to get it has waited k x 0.05 s, so the
 *              team spends 0.05 (1 + 2 + 3 + 4) = 0.5 s in "!$omp critical"
 *              (waiting and holding), whatever the order.
 *   lock       the same with omp_set_lock / omp_unset_lock: 0.05 (0 + 1 + 2
 *              + 3) = 0.3 s in omp_set_lock (waiting only).
 *   tasks      one thread creates 8 tasks of 0.05 s in a single construct;
 *              the team runs them (in the single's implicit barrier): 0.4 s
 *              in "!$omp task" over the team.
 *   taskwait   one thread creates 4 tasks; each sleeps 0.02 s, creates 2
 *              child tasks of 0.05 s and waits for them (taskwait): 12
 *              tasks, 4 x 0.02 + 8 x 0.05 = 0.48 s in "!$omp task".
 *   nestlock   every thread sets a nest lock twice, holds it 0.05 s, and
 *              unsets it twice: 0.3 s in omp_set_lock as in "lock", 8
 *              visits (the second set of each thread takes no time).
 *   hybrid     10 iterations: a parallel region where thread t works
 *              0.01 (t + 1) s, then an explicit barrier; MPI_Allreduce and
 *              0.02 s of serial code on the master (omp_online.py).
 *   serialized MPI_THREAD_SERIALIZED, 2 ranks: in a parallel region,
 *              thread 1 of rank 0 sleeps 0.3 s in "produce" and sends to
 *              rank 1, where thread 1 receives it (waiting 0.3 s); after
 *              the region, rank 1's master sleeps 0.2 s in "consume" and
 *              sends to rank 0's master, which waits 0.2 s for it.
 *   latesender 2 ranks: a parallel region whose threads sleep in "kernel",
 *              0.3 s on rank 0 and 0.05 s on rank 1; then rank 0's master
 *              sends to rank 1's, which waits 0.25 s in MPI_Recv while its
 *              3 workers sit idle (seed 000 §7: the kernel's delay costs
 *              are the wait and that idleness).
 *   funneled   2 ranks, 20 iterations of a parallel region without any
 *              collective: thread t works 0.005 (t + 1) s, a barrier, then
 *              the master exchanges one message (rank 0 sleeps 0.01 s in
 *              "produce" and sends, rank 1 receives) while the workers wait
 *              at the next barrier; 0.005 s of "serial" follow.  Requested
 *              cuts then fall inside open parallel regions (omp_online.py).
 *   nested     2 levels active: an outer team of 2 whose threads each run
 *              an inner team of 2 that sleeps 0.1 s in "inner" (2 nested
 *              teams per rank; not analyzed as teams, counted).
 *   sections   a sections construct of 3 sections that sleep 0.1, 0.2 and
 *              0.3 s (one per thread: the team waits 0.2 + 0.1 + 0.3 s in
 *              its implicit barrier), then a loop of 40 iterations of
 *              0.005 s, schedule(dynamic, 1): 40 chunks (OMPT dispatch).
 *   sampled    with ONLINEWS_SAMPLING, 2 threads: thread 0 computes (no
 *              sleeps) in omp_busy_a, thread 1 in omp_busy_b, each for
 *              0.15 s of its CPU time: both functions are sampled regions
 *              inside the threads' implicit tasks. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "scenario.h"

static void imbalance(void) {
  for (int it = 0; it < 2; ++it) {
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
      region_sleep("work", 0.1 * (t + 1));
#pragma omp barrier
      region_sleep("late", 0.05 * t);
#pragma omp barrier
    }
    region_sleep("serial", 0.2);
  }
}

static void critical(void) {
#pragma omp parallel
  {
#pragma omp critical
    sleep_s(0.05);
  }
}

static void lock(void) {
  omp_lock_t l;
  omp_init_lock(&l);
#pragma omp parallel
  {
    omp_set_lock(&l);
    sleep_s(0.05);
    omp_unset_lock(&l);
  }
  omp_destroy_lock(&l);
}

static void tasks(void) {
#pragma omp parallel
  {
#pragma omp single
    {
      for (int i = 0; i < 8; ++i) {
#pragma omp task
        sleep_s(0.05);
      }
    }
  }
}

static void taskwait(void) {
#pragma omp parallel
  {
#pragma omp single
    {
      for (int i = 0; i < 4; ++i) {
#pragma omp task
        {
          sleep_s(0.02);
          for (int j = 0; j < 2; ++j) {
#pragma omp task
            sleep_s(0.05);
          }
#pragma omp taskwait
        }
      }
    }
  }
}

static void nestlock(void) {
  omp_nest_lock_t l;
  omp_init_nest_lock(&l);
#pragma omp parallel
  {
    omp_set_nest_lock(&l);
    omp_set_nest_lock(&l);
    sleep_s(0.05);
    omp_unset_nest_lock(&l);
    omp_unset_nest_lock(&l);
  }
  omp_destroy_nest_lock(&l);
}

static void hybrid(void) {
  double in = 1, out = 0;
  for (int it = 0; it < 10; ++it) {
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
      region_sleep("work", 0.01 * (t + 1));
#pragma omp barrier
    }
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    region_sleep("serial", 0.02);
  }
}

/* One message from rank `from` to rank `to`: the sender sleeps `work` s in
 * region `name` first (none if NULL), the receiver receives it. */
static void message(int from, int to, int tag, const char* name, double work) {
  int rank = 0, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == from) {
    if (name != NULL) region_sleep(name, work);
    MPI_Send(&x, 1, MPI_INT, to, tag, MPI_COMM_WORLD);
  } else if (rank == to) {
    MPI_Recv(&x, 1, MPI_INT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

static void serialized(void) {
#pragma omp parallel
  {
    if (omp_get_thread_num() == 1) message(0, 1, 1, "produce", 0.3);
  }
  message(1, 0, 2, "consume", 0.2);
}

static void latesender(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#pragma omp parallel
  region_sleep("kernel", rank == 0 ? 0.3 : 0.05);
  message(0, 1, 0, NULL, 0);
}

static void funneled(void) {
  for (int it = 0; it < 20; ++it) {
#pragma omp parallel
    {
      region_sleep("work", 0.005 * (omp_get_thread_num() + 1));
#pragma omp barrier
#pragma omp master
      message(0, 1, it, "produce", 0.01);
#pragma omp barrier
    }
    region_sleep("serial", 0.005);
  }
}

static void nested(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    region_sleep("inner", 0.1);
  }
}

static void sections(void) {
#pragma omp parallel
  {
#pragma omp sections
    {
#pragma omp section
      sleep_s(0.1);
#pragma omp section
      sleep_s(0.2);
#pragma omp section
      sleep_s(0.3);
    }
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 40; ++i) sleep_s(0.005);
  }
}

/* Busy for `seconds` of the calling thread's CPU time (a loaded machine
 * only stretches the wall time). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static volatile double g_sink;
/* (Inlined into each caller with its own constants: two distinct functions
 * the compiler cannot fold into one.) */
__attribute__((always_inline)) static inline void busy(double seconds, double a, double b) {
  const double t0 = cpu_now();
  double x = g_sink;
  do {
    for (int i = 0; i < 200000; ++i) x = x * a + b * (double)i;
  } while (cpu_now() - t0 < seconds);
  g_sink = x;
}
__attribute__((noinline)) static void omp_busy_a(double seconds) { busy(seconds, 0.999998, 2e-9); }
__attribute__((noinline)) static void omp_busy_b(double seconds) { busy(seconds, 0.999997, 3e-9); }
static void sampled(void) {
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) omp_busy_a(0.15);
    else omp_busy_b(0.15);
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  const char* mode = argc > 1 ? argv[1] : "imbalance";
  const int serial = strcmp(mode, "serialized") == 0;
  MPI_Init_thread(&argc, &argv, serial ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED, &provided);
  if (serial && provided < MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "openmp: MPI_THREAD_SERIALIZED not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "imbalance") == 0) imbalance();
  if (strcmp(mode, "critical") == 0) critical();
  if (strcmp(mode, "lock") == 0) lock();
  if (strcmp(mode, "tasks") == 0) tasks();
  if (strcmp(mode, "taskwait") == 0) taskwait();
  if (strcmp(mode, "nestlock") == 0) nestlock();
  if (strcmp(mode, "hybrid") == 0) hybrid();
  if (strcmp(mode, "latesender") == 0) latesender();
  if (strcmp(mode, "nested") == 0) nested();
  if (strcmp(mode, "funneled") == 0) funneled();
  if (strcmp(mode, "sections") == 0) sections();
  if (strcmp(mode, "sampled") == 0) sampled();
  if (serial) serialized();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
