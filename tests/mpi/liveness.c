/* Liveness of requested cuts (issue 7): the tool never makes an application
 * thread wait for another rank outside a world-spanning collective it called
 * itself, so ranks that cannot take part in a cut must not slow down the
 * others, and nothing may hang.
 *
 * Every mode starts with an aligning MPI_Barrier.  The "workers" then run
 * `loop`: 300 iterations of 10 ms sleep (region `work`) and an 8-byte
 * MPI_Sendrecv ring among the workers only, 3.0 s in all plus ~0.1 ms of
 * communication and sleep overshoot per iteration.  Their buffers and
 * ONLINEWS_EPOCH_SECONDS (set in the .expect files) make them request cuts
 * during the loop.  One rank R does not take part:
 *
 *   recv R      R sits in MPI_Recv for the message the first worker sends
 *               after its loop: R's Late Sender is 3.0 s.
 *   compute R   R computes 8 s without any MPI call (busy loop on the
 *               clock, region `compute`), then all meet in MPI_Barrier: each
 *               worker waits 8 s less its loop there.
 *   subcomm     ranks {0,1} and {2,3} split MPI_COMM_WORLD; rank 0 enters
 *               MPI_Barrier on its half at once, rank 1 only after its loop
 *               (workers: ranks 1-3): rank 0 waits 3.0 s in that barrier.
 *
 * A cut protocol that blocks (for example a world MPI_Allreduce agreeing on
 * the cut, entered by a worker when its buffer passes a quarter) would hang
 * in `recv`/`subcomm` (R waits for a worker that waits for R; the .expect
 * files' timeout catches it) and would stretch the workers' loop to >= 8 s
 * in `compute`.  The .expect files bound the loop at 6 s: it measures
 * 3.07 s on a quiet 2-core machine and up to 4.2 s while a parallel build
 * keeps both cores busy (the analysis slices then take longer), so the
 * bound separates the two without depending on the machine's load.
 */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

static const int kIterations = 300;
static const double kStep = 0.010;

/* The workers' loop: `workers` lists the world ranks taking part, `me` is
 * this rank's index in it. */
static void worker_loop(const int* workers, int n, int me) {
  const int next = workers[(me + 1) % n], prev = workers[(me + n - 1) % n];
  double out = me, in = 0;
  onlinews_region_begin("loop");
  for (int i = 0; i < kIterations; ++i) {
    region_sleep("work", kStep);
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, next, 1, &in, 1, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    out = in + 1;
  }
  onlinews_region_end("loop");
}

/* Workers are all ranks except `skip`; returns this rank's index or -1. */
static int workers_except(int skip, int size, int rank, int* workers) {
  int n = 0, me = -1;
  for (int r = 0; r < size; ++r) {
    if (r == skip) continue;
    if (r == rank) me = n;
    workers[n++] = r;
  }
  return me;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "recv";
  const int r_skip = argc > 2 ? atoi(argv[2]) : 0;
  int* workers = malloc(sizeof(int) * (size_t)size);
  int token = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "subcomm") == 0) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
    const int me = workers_except(0, size, rank, workers);
    if (me >= 0) worker_loop(workers, size - 1, me);
    if (rank < 2) MPI_Barrier(half);
    MPI_Comm_free(&half);
  } else if (strcmp(mode, "compute") == 0) {
    const int me = workers_except(r_skip, size, rank, workers);
    if (me >= 0) {
      worker_loop(workers, size - 1, me);
    } else {
      onlinews_region_begin("compute");
      const double end = node_seconds() + 8.0;
      volatile double x = 0;
      while (node_seconds() < end) x = x * 0.5 + 1.0;
      onlinews_region_end("compute");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    const int me = workers_except(r_skip, size, rank, workers);
    if (me >= 0) {
      worker_loop(workers, size - 1, me);
      if (me == 0) MPI_Send(&token, 1, MPI_INT, r_skip, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&token, 1, MPI_INT, workers[0], 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  free(workers);
  MPI_Finalize();
  return 0;
}
