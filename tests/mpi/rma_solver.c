/* A red-black SOR solver for -u'' = 1 on [0, 1] with u(0) = u(1) = 0, its
 * points split evenly over the ranks, whose halo exchanges use MPI_Put:
 *
 *   rma_solver fence|pscw|passive [ITERATIONS]   (default 300)
 *
 *   fence    MPI_Win_fence before and after the halo puts;
 *   pscw     MPI_Win_post/start to the neighbours, puts, complete/wait;
 *   passive  MPI_Win_lock_all once; each half-sweep puts the halos, adds
 *            1 to each neighbour's counter of this rank (MPI_Accumulate),
 *            flushes, and polls its own two counters until both
 *            neighbours' halos of this half-sweep came: no collective in
 *            the loop.  It sleeps 20 us between polls: a spin loop records
 *            events faster than the analysis of any window takes them on 2
 *            cores (against MPICH, whose ranks spin on every core, 11.8 M
 *            events were dropped in a 16 s run on 4 ranks), and the
 *            one-epoch reference holds all of them at once.
 *
 * Each half-sweep also "computes" (1 + r mod 3) ms in "sweep_work" on rank
 * r (a sleep: exact waits even when oversubscribed), so ranks wait for
 * slower neighbours every half-sweep.  The solver's answer is checked
 * against the exact solution u(x) = x (1 - x) / 2 after enough iterations
 * for the coarse grid used here, and must be the same in all variants; rank
 * 0 prints the residual and the largest error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

enum { kLocal = 16 };  /* points per rank */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "fence";
  const int iterations = argc > 2 ? atoi(argv[2]) : 300;
  const int fence = strcmp(mode, "fence") == 0, pscw = strcmp(mode, "pscw") == 0, passive = !fence && !pscw;
  const int n = kLocal * size;
  const double h = 1.0 / (n + 1), omega = 2.0 / (1.0 + sin(3.14159265358979 * h));  /* optimal */
  /* Window: u[0] left ghost, u[1..kLocal] own points, u[kLocal+1] right
   * ghost, then the passive variant's arrival counter. */
  struct {
    double u[kLocal + 2];
    long from_left, from_right;  /* half-sweeps each neighbour has delivered */
  } * mem;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  memset(mem, 0, sizeof *mem);
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  MPI_Group world, partners;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int list[2], k = 0;
  if (left != MPI_PROC_NULL) list[k++] = left;
  if (right != MPI_PROC_NULL) list[k++] = right;
  MPI_Group_incl(world, k, list, &partners);
  const MPI_Aint ghost_left = 0, ghost_right = (MPI_Aint)((kLocal + 1) * sizeof(double));
  const MPI_Aint from_left_at = (MPI_Aint)((char*)&mem->from_left - (char*)mem);
  const MPI_Aint from_right_at = (MPI_Aint)((char*)&mem->from_right - (char*)mem);
  long half_sweeps = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (fence) MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (passive) MPI_Win_lock_all(0, win);

  for (int it = 0; it < iterations; ++it) {
    for (int colour = 0; colour < 2; ++colour) {
      /* Update the points of this colour (global index parity). */
      for (int i = 1; i <= kLocal; ++i) {
        const int g = rank * kLocal + i - 1;
        if (g % 2 != colour) continue;
        const double gs = 0.5 * (mem->u[i - 1] + mem->u[i + 1] + h * h);
        mem->u[i] += omega * (gs - mem->u[i]);
      }
      region_sleep("sweep_work", 0.001 * (1 + rank % 3));
      /* Halos: my first point is my left neighbour's right ghost, my last
       * its right neighbour's left ghost. */
      if (pscw) {
        MPI_Win_post(partners, 0, win);
        MPI_Win_start(partners, 0, win);
      }
      MPI_Put(&mem->u[1], 1, MPI_DOUBLE, left, ghost_right, 1, MPI_DOUBLE, win);
      MPI_Put(&mem->u[kLocal], 1, MPI_DOUBLE, right, ghost_left, 1, MPI_DOUBLE, win);
      if (fence) MPI_Win_fence(0, win);
      if (pscw) {
        MPI_Win_complete(win);
        MPI_Win_wait(win);
      }
      if (passive) {
        const long one = 1;
        MPI_Win_flush_all(win);  /* the halos before the counters */
        MPI_Accumulate(&one, 1, MPI_LONG, left, from_right_at, 1, MPI_LONG, MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_LONG, right, from_left_at, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_flush_all(win);
        ++half_sweeps;
        /* Each neighbour's own count: one that runs ahead must not stand
         * in for one that lags. */
        long l = left == MPI_PROC_NULL ? half_sweeps : 0, r = right == MPI_PROC_NULL ? half_sweeps : 0;
        while (l < half_sweeps || r < half_sweeps) {
          MPI_Win_sync(win);
          if (left != MPI_PROC_NULL) MPI_Fetch_and_op(NULL, &l, MPI_LONG, rank, from_left_at, MPI_NO_OP, win);
          if (right != MPI_PROC_NULL) MPI_Fetch_and_op(NULL, &r, MPI_LONG, rank, from_right_at, MPI_NO_OP, win);
          MPI_Win_flush(rank, win);
          if (l < half_sweeps || r < half_sweeps) sleep_s(20e-6);
        }
        MPI_Win_sync(win);
      }
    }
  }
  if (passive) MPI_Win_unlock_all(win);
  if (fence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  double err = 0.0;
  for (int i = 1; i <= kLocal; ++i) {
    const double x = (rank * kLocal + i) * h;
    err = fmax(err, fabs(mem->u[i] - 0.5 * x * (1.0 - x)));
  }
  double max_err = 0.0;
  MPI_Reduce(&err, &max_err, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("rma_solver %s: %d iterations on %d ranks, largest error %.3e\n", mode, iterations, size, max_err);
    if (!(max_err < 1e-5)) {
      fprintf(stderr, "rma_solver: the solution is wrong (error %g)\n", max_err);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Group_free(&partners);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
