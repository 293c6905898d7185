/* Cost of one intercepted MPI call, measured on the real library: a tight
 * loop of MPI_Iprobe on a communicator with nothing pending (a cheap call
 * with the "plain" hook: 2 recorded events, Enter + Leave).  Built twice:
 * callcost_plain and callcost_onlinews; run_overhead.py subtracts the two.
 *
 * The loop runs in blocks of BLOCK calls; only the blocks are timed.  Between
 * blocks, an untimed MPI_Allreduce lets onlinews cut an epoch.  With the
 * defaults the whole run records 400 000 events, below the default buffer
 * (ONLINEWS_BUFFER=16M: 524 288 events), so nothing is dropped even without
 * an epoch: the blocks then measure the first pass over the buffer's memory.
 * With ONLINEWS_EPOCH_SECONDS=0 every Allreduce cuts an epoch and the buffer
 * is reused from its start: the steady state.
 *
 * Usage: callcost [BLOCKS [BLOCK]]   (defaults 20, 10000)
 * Rank 0 prints one line:
 *   callcost ranks=R calls=N ns_per_call=X
 * X is the median over blocks of rank 0's time per call.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long blocks = argc > 1 ? atol(argv[1]) : 20;
  const long block = argc > 2 ? atol(argv[2]) : 10000;
  if (blocks <= 0 || block <= 0) {
    if (rank == 0) fprintf(stderr, "usage: callcost [BLOCKS>0 [BLOCK>0]]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double* per_call = malloc(sizeof(double) * (size_t)blocks);
  int flag = 0;
  double token = 1.0, sum = 0.0;
  for (long b = 0; b < blocks; ++b) {
    MPI_Allreduce(&token, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < block; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    per_call[b] = (MPI_Wtime() - t0) / (double)block;
  }
  qsort(per_call, (size_t)blocks, sizeof(double), cmp_double);
  if (rank == 0) {
    printf("callcost ranks=%d calls=%ld ns_per_call=%.2f flag=%d\n", size, blocks * block,
           1e9 * per_call[blocks / 2], flag);
    fflush(stdout);
  }
  free(per_call);
  MPI_Finalize();
  return 0;
}
