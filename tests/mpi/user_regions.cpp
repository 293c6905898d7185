// User regions from C++ (RAII helper) and C, ONLINEWS_FILTER, and a
// mismatched end.  2 ranks, with ONLINEWS_FILTER=tiny_*:
//   outer (10 visits) > inner (10 visits, rank 0 sleeps 20 ms in it, then an
//   MPI_Barrier: rank 1 waits 10 x 20 ms = 0.2 s in outer's barrier);
//   tiny_helper (1000 visits) is filtered out and never appears;
//   "unbalanced" is opened, "leaked" opened inside it, then "unbalanced" is
//   ended: one warning, both close there.
#include <mpi.h>
#include <onlinews.h>

#include <chrono>
#include <thread>

static void inner(int rank) {
  onlinews::Region r{"inner"};
  if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 10; ++i) {
    onlinews::Region outer{"outer"};
    inner(rank);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int i = 0; i < 1000; ++i) {
    onlinews_region_begin("tiny_helper");
    onlinews_region_end("tiny_helper");
  }
  onlinews_region_begin("unbalanced");
  onlinews_region_begin("leaked");
  onlinews_region_end("unbalanced");
  onlinews_region_end("never_begun");
  MPI_Finalize();
  return 0;
}
