/* Robustness scenarios (see the robust_*.expect files).  Modes:
 *   events N   N user regions per rank plus a ring of zero-byte messages and
 *              no collective before MPI_Finalize: with a small ONLINEWS_BUFFER
 *              the buffer fills and events are dropped.
 *   exit C     a barrier, then MPI_Finalize and exit code C: the analyzer
 *              must not change the application's exit code.
 *   kill K     40 iterations of a 20 ms sleep (rank 1 sleeps 50 ms: rank 0
 *              waits 30 ms per barrier) and MPI_Barrier; after K iterations
 *              rank 0 kills itself with SIGKILL (between two MPI calls, so
 *              never inside the tool's output).  sigkill.py checks the file.
 *   abort K    the same, but rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) after
 *              K iterations (rank 0 is then in the barrier or an epoch's
 *              replay: it must not be left hanging);
 *   segv K     the same, but rank 1 dies of SIGSEGV after K iterations.
 *   plain      the late-sender pair of late_sender_chain.c, once: rank 1
 *              waits 0.3 s for rank 0 (used with bad settings).
 *   maps       plain, then every rank prints whether libhdf5 is mapped into
 *              it ("rank R libhdf5 N": N mappings in /proc/self/maps) before
 *              MPI_Finalize; io_module.py checks that only rank 0 loads it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onlinews.h"
#include "scenario.h"

static void print_hdf5_maps(int rank) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[4096];
  int n = 0;
  while (f != NULL && fgets(line, sizeof line, f) != NULL) n += strstr(line, "libhdf5") != NULL;
  if (f != NULL) fclose(f);
  printf("rank %d libhdf5 %d\n", rank, n);
  fflush(stdout);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "plain";
  int code = 0, x = 0;
  if (strcmp(mode, "events") == 0) {
    const long n = argc > 2 ? atol(argv[2]) : 100000;
    for (long i = 0; i < n; ++i) {
      onlinews_region_begin("tiny");
      onlinews_region_end("tiny");
    }
    MPI_Sendrecv_replace(&x, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
  } else if (strcmp(mode, "kill") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "segv") == 0) {
    const int k = argc > 2 ? atoi(argv[2]) : 30;
    for (int i = 0; i < 40; ++i) {
      if (i == k && rank == 0 && mode[0] == 'k') raise(SIGKILL);
      if (i == k && rank == 1 && mode[0] == 'a') MPI_Abort(MPI_COMM_WORLD, 7);
      if (i == k && rank == 1 && mode[0] == 's') raise(SIGSEGV);
      region_sleep("work", rank == 1 ? 0.050 : 0.020);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "exit") == 0) {
    code = argc > 2 ? atoi(argv[2]) : 3;
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      sleep_s(0.3);
      MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "maps") == 0) print_hdf5_maps(rank);
  }
  MPI_Finalize();
  return code;
}
