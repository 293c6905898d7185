/* Communication-heavy MPI proxy for the overhead measurement
 * (benchmarks/run_overhead.py).  Built twice: pingpong_plain (no onlinews)
 * and pingpong_onlinews (linked with libonlinews).
 *
 * Every iteration, on every rank:
 *   - a ring exchange of one 8-byte message: MPI_Irecv from the left,
 *     MPI_Isend to the right, MPI_Waitall;
 *   - a ping-pong of one 8-byte message with the partner rank (rank ^ 1):
 *     even ranks MPI_Send then MPI_Recv, odd ranks the reverse (a rank
 *     without partner skips it);
 *   - every ALLREDUCE_EVERY iterations an MPI_Allreduce of one double (the
 *     collectives at which onlinews may cut an epoch);
 *   - WORK steps of a dependent floating-point chain (a fixed amount of
 *     computation, about 4 cycles per step; default 0).
 * That is 5 intercepted calls (about 17 recorded events) per iteration.  With
 * WORK = 0 there is no computation at all: the worst case for the relative
 * overhead.
 *
 * Usage: pingpong [ITERATIONS [ALLREDUCE_EVERY [WORK]]]   (defaults 20000, 100, 0)
 * Rank 0 prints one line:
 *   pingpong ranks=R iterations=N allreduce_every=K work=W elapsed_s=T us_per_iter=U check=C
 * where T is MPI_Wtime between two barriers around the loop (MPI_Init,
 * MPI_Finalize and onlinews' final output are not included).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long iters = argc > 1 ? atol(argv[1]) : 20000;
  const long every = argc > 2 ? atol(argv[2]) : 100;
  const long work = argc > 3 ? atol(argv[3]) : 0;
  if (iters <= 0 || every <= 0 || work < 0) {
    if (rank == 0) fprintf(stderr, "usage: pingpong [ITERATIONS>0 [ALLREDUCE_EVERY>0 [WORK>=0]]]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : -1;
  double ring_in = 0.0, ring_out = rank, pp = rank, sum = 0.0, check = 0.0;
  volatile double seed = 1.0000001;
  double x = 0.0;

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) {
    MPI_Request req[2];
    MPI_Irecv(&ring_in, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&ring_out, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    ring_out = ring_in + 1.0;
    if (partner >= 0) {
      if ((rank & 1) == 0) {
        MPI_Send(&pp, 1, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD);
        MPI_Recv(&pp, 1, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&pp, 1, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pp += 1.0;
        MPI_Send(&pp, 1, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD);
      }
    }
    for (long k = 0; k < work; ++k) x = x * seed + 1e-9;
    if ((i + 1) % every == 0) {
      MPI_Allreduce(&ring_in, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      check += sum;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - t0;
  if (rank == 0) {
    printf("pingpong ranks=%d iterations=%ld allreduce_every=%ld work=%ld elapsed_s=%.6f us_per_iter=%.3f "
           "check=%.0f x=%g\n",
           size, iters, every, work, elapsed, 1e6 * elapsed / (double)iters, check + pp, x);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
