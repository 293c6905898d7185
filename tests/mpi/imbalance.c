/* Seed 003's synthetic load-imbalance benchmark and an MPMD variant.
 *
 * work() + MPI_Barrier in a loop, 32 iterations on 8 ranks; the average
 * workload per iteration is W = 40 ms in every scenario (argv[1]):
 *   balanced  every rank works W
 *   static    ranks 0-3 work 50 ms, ranks 4-7 30 ms, every iteration
 *   dynamic   rank (i mod 8) works 50 ms in iteration i, the others
 *             W - 10/7 ms: every rank has the same total workload
 *   mixed     rank 0 works 50 ms in the first half, rank 1 in the second
 *             half, the others W - 10/7 ms
 * The imbalanced scenarios run 25 % longer (50 ms per iteration): the
 * critical-path imbalance of work() is 32 x 10 ms = 0.32 s, 25 % of the
 * average workload (1.28 s), in all three; the profile's max - avg finds
 * 25 % (static), 0 % (dynamic) and about 10.7 % (mixed).
 *
 *   mpmd      4 ranks, 20 iterations: ranks 0 and 1 run solve_a (40 ms),
 *             rank 2 solve_b for 45 ms and rank 3 solve_b for 60 ms, then a
 *             barrier.  solve_b on rank 3 is the critical path.  Ranks 0
 *             and 1 wait 20 ms each for an activity they do not run:
 *             inter-partition imbalance 2 x 20 x 20 ms = 0.8 s; rank 2 runs
 *             solve_b 15 ms shorter than the path: intra-partition
 *             imbalance 20 x 15 ms = 0.3 s.
 */
#include <string.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "balanced";
  const double w = 0.040, heavy = 0.050, light = w - 0.010 / 7.0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "mpmd") == 0) {
    for (int it = 0; it < 20; ++it) {
      if (rank < 2) region_sleep("solve_a", 0.040);
      else region_sleep("solve_b", rank == 3 ? 0.060 : 0.045);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else {
    for (int it = 0; it < 32; ++it) {
      double t = w;
      if (strcmp(mode, "static") == 0) t = rank < size / 2 ? heavy : 2 * w - heavy;
      if (strcmp(mode, "dynamic") == 0) t = rank == it % size ? heavy : light;
      if (strcmp(mode, "mixed") == 0) t = rank == (it < 16 ? 0 : 1) ? heavy : light;
      region_sleep("work", t);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
