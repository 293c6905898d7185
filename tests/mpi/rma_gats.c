/* General active target synchronization (post/start/complete/wait, seed
 * 001), 4 ranks, 3 iterations that begin at a barrier:
 *
 *   late post      rank 1 (target of rank 0) works 0.2 s in "late_post_work"
 *                  before MPI_Win_post; rank 0 starts its access epoch at
 *                  once and puts to rank 1.  Rank 0 waits 0.2 s per
 *                  iteration for the post, in MPI_Win_start, the MPI_Put or
 *                  MPI_Win_complete (where depends on the MPI library: seed
 *                  001's two variants, mpi_rma_sync_late_post and
 *                  mpi_rma_comm_late_post): 0.6 s in all.
 *   late complete  rank 3 (target of rank 2) posts and waits at once; rank
 *                  2 starts, works 0.05 s in "origin_work", puts to rank 3,
 *                  works 0.1 s more in "late_complete_work" and completes:
 *                  rank 3 waits 0.15 s per iteration in MPI_Win_wait (Early
 *                  Wait: 0.45 s), 0.1 s of it after the put had left (Late
 *                  Complete: 0.3 s).
 *
 * Each access epoch has one target and one operation to it: pairwise
 * synchronizations 3 on ranks 0 and 2, none unneeded.  Every target checks
 * the value it received.
 */
#include "scenario.h"

enum { kIterations = 3 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  if (world_size() != 4) {
    if (rank == 0) fprintf(stderr, "rma_gats needs 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double slot = -1.0;
  MPI_Win win;
  MPI_Win_create(&slot, (MPI_Aint)sizeof slot, (int)sizeof slot, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, partner;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = rank ^ 1; /* 0 <-> 1, 2 <-> 3 */
  MPI_Group_incl(world, 1, &other, &partner);
  const int origin = rank % 2 == 0;

  for (int it = 0; it < kIterations; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (origin) {
      const double value = 100.0 * rank + it;
      MPI_Win_start(partner, 0, win);
      if (rank == 2) region_sleep("origin_work", 0.05);
      MPI_Put(&value, 1, MPI_DOUBLE, other, 0, 1, MPI_DOUBLE, win);
      if (rank == 2) region_sleep("late_complete_work", 0.1);
      MPI_Win_complete(win);
    } else {
      if (rank == 1) region_sleep("late_post_work", 0.2);
      MPI_Win_post(partner, 0, win);
      MPI_Win_wait(win);
      if (slot != 100.0 * other + it) {
        fprintf(stderr, "rank %d: iteration %d received %g, expected %g\n", rank, it, slot, 100.0 * other + it);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
  }
  MPI_Group_free(&partner);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
