/* Passive-target synchronization (locks), 4 ranks, each part between
 * barriers:
 *
 *   competition  twice: rank 1 locks rank 0's window exclusively at once
 *                and holds the lock 0.3 s ("hold_lock", an accumulate
 *                inside); rank 2 asks for the same lock 0.05 s later
 *                ("late_lock") and waits 0.25 s until rank 1 unlocks: lock
 *                competition 0.5 s on rank 2, in MPI_Win_lock, the
 *                accumulate or MPI_Win_unlock, wherever the MPI library
 *                waits for the lock (Open MPI's osc/rdma: in the lock;
 *                osc/pt2pt: in the unlock).
 *   progress     rank 3 sleeps 0.5 s outside MPI ("target_busy") while
 *                rank 1 locks its window, puts and unlocks.  A library
 *                whose locks need the target's progress (osc/pt2pt) keeps
 *                rank 1 in MPI_Win_unlock until rank 3 enters the barrier:
 *                wait for progress 0.5 s; with RDMA or shared-memory
 *                windows (Open MPI's default here) rank 1 does not wait.
 *
 *   requests     rank 0 puts 2.0 to rank 2's window with MPI_Rput and
 *                gets it back with MPI_Rget under a shared lock,
 *                completing them with MPI_Wait and MPI_Waitall: one put and
 *                one get of 8 bytes each on rank 0, and the value must
 *                come back.
 *
 * Rank 0 checks the accumulated value.  rma_locks.expect runs the default
 * library setup, rma_locks_pt2pt.expect Open MPI's osc/pt2pt.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  if (world_size() != 4) {
    if (rank == 0) fprintf(stderr, "rma_locks needs 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Window memory off the stack: MPI writes it behind the compiler's back, and
   * an -O2 build under MPICH found the window handle next to it overwritten
   * with the accumulated value. */
  static double slot = 0.0;
  MPI_Win win;
  MPI_Win_create(&slot, (MPI_Aint)sizeof slot, (int)sizeof slot, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const double one = 1.0;
  for (int it = 0; it < 2; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 || rank == 2) {
      if (rank == 2) region_sleep("late_lock", 0.05);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, win);
      if (rank == 1) region_sleep("hold_lock", 0.3);
      MPI_Win_unlock(0, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 3) region_sleep("target_busy", 0.5);
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 3, 0, win);
    MPI_Put(&one, 1, MPI_DOUBLE, 3, 0, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(3, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const double two = 2.0;
    double back = 0.0;
    MPI_Request req[2];
    MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
    MPI_Rput(&two, 1, MPI_DOUBLE, 2, 0, 1, MPI_DOUBLE, win, &req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(2, win);
    MPI_Rget(&back, 1, MPI_DOUBLE, 2, 0, 1, MPI_DOUBLE, win, &req[1]);
    MPI_Waitall(1, &req[1], MPI_STATUSES_IGNORE);
    MPI_Win_unlock(2, win);
    if (back != 2.0) {
      fprintf(stderr, "rank 0: got %g back from rank 2, expected 2\n", back);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && slot != 4.0) {
    fprintf(stderr, "rank 0: slot %g, expected 4\n", slot);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 3 && slot != 1.0) {
    fprintf(stderr, "rank 3: slot %g, expected 1\n", slot);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
