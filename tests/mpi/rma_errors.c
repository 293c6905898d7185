/* Erroneous RMA synchronization must not crash, hang or change the program
 * (issue 8, part 6).  4 ranks; the window's error handler is
 * MPI_ERRORS_RETURN, so the program goes on whatever MPI says:
 *   - every rank calls MPI_Win_complete without MPI_Win_start,
 *   - every rank calls MPI_Win_unlock without MPI_Win_lock,
 *   - rank 0 calls MPI_Win_wait without MPI_Win_post;
 * then a correct fence epoch in which rank 3 works 0.2 s first: ranks 0, 1
 * and 2 wait 0.2 s each at the closing fence (0.6 s).  Each erroneous call
 * is counted once (rma_sync_errors = 9): by the wrapper if MPI rejects it
 * (Open MPI 4.1 rejects the unlocks and the wait: 5), else by the analysis,
 * which finds it out of order (Open MPI 4.1 accepts the completes: 4).
 * Rank 0 prints how many MPI rejected.  The fence's waits are analyzed as
 * usual.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  static double slot = 0.0;  /* (off the stack, as in rma_locks.c) */
  MPI_Win win;
  MPI_Win_create(&slot, (MPI_Aint)sizeof slot, (int)sizeof slot, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int rejected = 0;
  rejected += MPI_Win_complete(win) != MPI_SUCCESS;
  rejected += MPI_Win_unlock((rank + 1) % world_size(), win) != MPI_SUCCESS;
  if (rank == 0) rejected += MPI_Win_wait(win) != MPI_SUCCESS;
  int total = 0;
  MPI_Reduce(&rejected, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("rma_errors: MPI rejected %d of the 9 erroneous calls\n", total);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 3) region_sleep("late_work", 0.2);
  const double one = 1.0;
  MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, win);
  MPI_Win_fence(0, win);
  if (rank == 0 && slot != (double)world_size()) {
    fprintf(stderr, "rank 0: slot %g, expected %d\n", slot, world_size());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
