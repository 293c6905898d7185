/* RMA scenarios with fences (seed 001), on 4 ranks:
 *   rma create|allocate [ITERATIONS [WORK]]
 * argv[1] picks how the window is made: MPI_Win_create on the program's own
 * memory, or MPI_Win_allocate.  ITERATIONS (5) fence epochs in which rank r
 * works WORK r seconds (WORK 0.02).  Expected values, for the defaults, in
 * rma_*.expect:
 *
 *   create   rank r sleeps 0.1 r s in "late_create" before creating the
 *            window: ranks 0, 1, 2 wait 0.3, 0.2, 0.1 s for rank 3
 *            (wait at create 0.6 s, caused by rank 3).
 *   fences   a fence with MPI_MODE_NOPRECEDE, then 5 iterations of: rank
 *            r works 0.02 r s in "rma_work", puts 8 doubles to rank r+1,
 *            gets 4 ints from rank r-1 and adds one long at rank 0 with
 *            MPI_Fetch_and_op, fence.  Each fence waits for rank 3: ranks
 *            0, 1, 2 wait 0.06, 0.04, 0.02 s per iteration, 0.6 s in all,
 *            all of it caused by rank 3's work (delay costs).
 *            Early Fence: each target waits for the latest operation on
 *            its window, which leaves when its origin finished working:
 *            rank 0 is accessed by everyone (fetch-and-op), the latest
 *            rank 3 at 0.06 s: 0.06 s; rank 1 by ranks 0 (put) and 2
 *            (get) at 0.04 s, entering at 0.02 s: 0.02 s; rank 2 by 1 and
 *            3 at 0.06 s, entering at 0.04 s: 0.02 s; rank 3 by 2 and 0:
 *            none.  5 x (0.06 + 0.02 + 0.02) = 0.5 s.
 *            Pairwise synchronizations: each fence closing an epoch
 *            synchronizes each rank with all 4 members: 5 x 4 x 4 = 80;
 *            unneeded: rank 0 was accessed by all, ranks 1-3 by 2 each:
 *            5 x (0 + 2 + 2 + 2) = 30.
 *   free     rank r sleeps 0.05 (3 - r) s in "late_free" before
 *            MPI_Win_free: ranks 1, 2, 3 wait 0.05, 0.10, 0.15 s for
 *            rank 0 (wait at free 0.3 s).
 *
 * Per rank and iteration: a put of 64 B, a get of 16 B, an atomic of 8 B each way; the
 * fetch-and-op's results on rank 0 are checked (the program's own answer
 * must not change under the tool).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

enum { kDoubles = 8, kInts = 4 };

struct Exposed {
  double in[kDoubles];
  int ints[kInts];
  long counter;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const int allocate = argc > 1 && strcmp(argv[1], "allocate") == 0;
  const int iterations = argc > 2 ? atoi(argv[2]) : 5;
  const double work = argc > 3 ? atof(argv[3]) : 0.02;
  struct Exposed* mem = NULL;
  struct Exposed own;
  MPI_Win win;
  MPI_Barrier(MPI_COMM_WORLD);

  region_sleep("late_create", 0.1 * rank);
  if (allocate) {
    MPI_Win_allocate((MPI_Aint)sizeof(struct Exposed), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  } else {
    mem = &own;
    MPI_Win_create(mem, (MPI_Aint)sizeof(struct Exposed), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  }
  memset(mem, 0, sizeof *mem);
  for (int i = 0; i < kInts; ++i) mem->ints[i] = 100 * rank + i;
  MPI_Barrier(MPI_COMM_WORLD);  /* the initialization is visible before any access */

  double out[kDoubles];
  int got[kInts];
  long one = 1, before = -1, sum_before = 0;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);  /* opens the first access epoch, closes none */
  for (int it = 0; it < iterations; ++it) {
    region_sleep("rma_work", work * rank);
    for (int i = 0; i < kDoubles; ++i) out[i] = rank + 0.5 * i;
    MPI_Put(out, kDoubles, MPI_DOUBLE, (rank + 1) % size, (MPI_Aint)offsetof(struct Exposed, in), kDoubles,
            MPI_DOUBLE, win);
    MPI_Get(got, kInts, MPI_INT, (rank + size - 1) % size, (MPI_Aint)offsetof(struct Exposed, ints), kInts, MPI_INT,
            win);
    MPI_Fetch_and_op(&one, &before, MPI_LONG, 0, (MPI_Aint)offsetof(struct Exposed, counter), MPI_SUM, win);
    MPI_Win_fence(0, win);
    sum_before += before;
    for (int i = 0; i < kInts; ++i) {
      if (got[i] != 100 * ((rank + size - 1) % size) + i) {
        fprintf(stderr, "rank %d: get returned %d, expected %d\n", rank, got[i], 100 * ((rank + size - 1) % size) + i);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
  }
  /* Every fetch-and-op saw a distinct earlier counter: the values 0 .. 4 size - 1. */
  long total = 0;
  MPI_Reduce(&sum_before, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  const long n = (long)iterations * size;
  if (rank == 0 && (mem->counter != n || total != n * (n - 1) / 2)) {
    fprintf(stderr, "counter %ld (expected %ld), fetched sum %ld (expected %ld)\n", mem->counter, n, total,
            n * (n - 1) / 2);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int i = 0; i < kDoubles; ++i) {
    const double want = (rank + size - 1) % size + 0.5 * i;
    if (mem->in[i] != want) {
      fprintf(stderr, "rank %d: put left %g, expected %g\n", rank, mem->in[i], want);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }

  region_sleep("late_free", 0.05 * (size - 1 - rank));
  MPI_Win_free(&win);
  if (rank == 0) printf("rma %s: ok\n", allocate ? "allocate" : "create");
  MPI_Finalize();
  return 0;
}
