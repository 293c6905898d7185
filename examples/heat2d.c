/* heat2d — 2-D heat equation (explicit Jacobi sweeps) with a deliberate load
 * imbalance, to show what onlinews finds in a typical stencil code.
 *
 *   ONLINEWS_OUTPUT=heat.h5 mpirun -np 4 ./heat2d [N [ITERATIONS [CHECKED]]]
 *
 * Defaults: N = 2048, 240 iterations, CHECKED = 25 (see THE IMBALANCE):
 * about 3-4 s on 4 ranks oversubscribed on an idle 2-core machine (up to
 * twice that when other work competes for the cores), and about 100 MB per
 * rank.  (With blocks much smaller than ~1000^2 an iteration is so short
 * that the scheduling noise of an oversubscribed node hides the imbalance.)
 *
 * The P processes form a non-periodic Cartesian grid (MPI_Dims_create +
 * MPI_Cart_create; 4 ranks give 2 x 2).  Each owns an N x N block of interior
 * cells plus one ghost layer.  The global top edge is held at 1, the other
 * edges at 0, and heat diffuses in from the top.  Every iteration:
 *
 *   "halo_exchange"  MPI_Irecv/MPI_Isend with the 4 neighbours (MPI_PROC_NULL
 *                    at the borders of the domain), then MPI_Waitall;
 *   "stencil"        the 5-point update u' = u + a (sum of 4 neighbours - 4u);
 *   "residual"       every 20 iterations and after the last one: the local sum
 *                    of (u' - u)^2 and an MPI_Allreduce of it.
 *
 * At the end an MPI_Reduce sums a checksum of the field on rank 0, which
 * prints one line with the final residual and the checksum.  The result
 * depends only on the global grid: 4 ranks with N = 512 print the same line
 * (up to rounding) as 1 rank with N = 1024.
 *
 * THE IMBALANCE.  Ranks whose first grid coordinate is 0 (the top row of the
 * process grid; ranks 0 and 1 on 4 processes) run a "consistency check" inside
 * "stencil" every iteration: they recompute the update of the first CHECKED
 * percent of their rows (default 25: a quarter) into a scratch array, compare
 * it with the real update and store the number of mismatches (always 0) in a
 * volatile sink.  That is real, deterministic floating-point work.  With 2
 * ranks on a 2-core machine it added 15 to 40 % to those ranks' stencil time
 * at the default, varying between runs and sessions, and doubled it at
 * CHECKED = 100.  It leaves the solution untouched: residual and checksum are
 * the same without it, or with any CHECKED (compile with -DHEAT2D_BALANCED to
 * check).
 *
 * WHAT ONLINEWS SHOULD REPORT (4 ranks, 2 x 2 grid):
 *   - Late Sender in MPI_Waitall (call path heat2d > halo_exchange) on the
 *     neighbours of the slow ranks across the first grid dimension, ranks 2
 *     and 3: they finish their sweep early and wait for the halo rows that the
 *     slow ranks send only after their longer sweep.  Ranks 0 and 1 exchange
 *     with each other along the second dimension and wait much less.
 *   - Wait at N x N in MPI_Allreduce (heat2d > residual) on the fast ranks 2
 *     and 3, which reach the reduction before ranks 0 and 1.
 * The wait states sit on the ranks that are NOT the cause of the delay; the
 * cause shows in the computation time of "stencil" on ranks 0 and 1.
 * With more ranks than cores (mpirun --oversubscribe) expect noise on top:
 * some Late Sender on the slow ranks as well, and part of it classified as
 * "Late Sender, Wrong Order".
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "onlinews.h"

#define RESIDUAL_EVERY 20
#define ALPHA 0.2     /* a <= 1/4 keeps the explicit scheme stable */

/* (N + 2) x (N + 2) arrays, row-major; row 0 / N + 1 and column 0 / N + 1
 * are the ghost layers. */
#define AT(a, i, j) (a)[(size_t)(i) * (size_t)ld + (size_t)(j)]

static volatile double diagnostic_sink;

static long parse_arg(const char* s, long dflt, long max, const char* what, int rank) {
  if (!s) return dflt;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v <= 0 || v > max) {
    if (rank == 0)
      fprintf(stderr, "heat2d: invalid %s '%s': want 1..%ld (usage: heat2d [N [ITERATIONS [CHECKED]]])\n", what, s,
              max);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return v;
}

/* 5-point update of rows [i0, i1) of the interior into `out`. */
static void stencil_rows(const double* restrict u, double* restrict out, int n, int i0, int i1) {
  const int ld = n + 2;
  for (int i = i0; i < i1; ++i) {
    for (int j = 1; j <= n; ++j) {
      const double c = AT(u, i, j);
      AT(out, i, j) = c + ALPHA * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) +
                                   AT(u, i, j + 1) - 4.0 * c);
    }
  }
}

/* The extra work of the slow ranks: recompute the first `percent` % of the
 * update and compare it with the real one.  The result (0 mismatches) goes
 * to a volatile sink so that the compiler cannot drop the computation. */
static void consistency_check(const double* u, const double* unew, double* scratch, int n, int percent) {
  const int ld = n + 2;
  const int rows = (int)((long)n * percent / 100);
  stencil_rows(u, scratch, n, 1, 1 + rows);
  long mismatches = 0;
  for (int i = 1; i <= rows; ++i)
    for (int j = 1; j <= n; ++j) mismatches += AT(scratch, i, j) != AT(unew, i, j);
  diagnostic_sink = (double)mismatches;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  const int n = (int)parse_arg(argc > 1 ? argv[1] : NULL, 2048, 100000, "block size N", world_rank);
  const int iterations = (int)parse_arg(argc > 2 ? argv[2] : NULL, 240, 100000, "iteration count", world_rank);
  const int checked = (int)parse_arg(argc > 3 ? argv[3] : NULL, 25, 100, "checked percent", world_rank);
  const int ld = n + 2;

  /* Process grid. */
  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Dims_create(nprocs, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int rank;
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  int up, down, left, right;
  MPI_Cart_shift(cart, 0, 1, &up, &down);    /* first dimension: rows */
  MPI_Cart_shift(cart, 1, 1, &left, &right); /* second dimension: columns */
#ifdef HEAT2D_BALANCED
  const int slow = 0;
#else
  const int slow = coords[0] == 0;
#endif

  const size_t cells = (size_t)ld * (size_t)ld;
  double* u = calloc(cells, sizeof *u);
  double* unew = calloc(cells, sizeof *unew);
  double* scratch = slow ? calloc(cells, sizeof *scratch) : NULL;
  if (!u || !unew || (slow && !scratch)) {
    fprintf(stderr, "heat2d: out of memory (N = %d)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Dirichlet boundary: the ghost row above the top row of the process grid
   * is held at 1 in both arrays (the exchange never writes it). */
  if (up == MPI_PROC_NULL)
    for (int j = 0; j < ld; ++j) AT(u, 0, j) = AT(unew, 0, j) = 1.0;

  MPI_Datatype column;
  MPI_Type_vector(n, 1, ld, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  double residual = 0.0;
  for (int it = 1; it <= iterations; ++it) {
    onlinews_region_begin("halo_exchange");
    MPI_Request req[8];
    MPI_Irecv(&AT(u, 0, 1), n, MPI_DOUBLE, up, 0, cart, &req[0]);
    MPI_Irecv(&AT(u, n + 1, 1), n, MPI_DOUBLE, down, 1, cart, &req[1]);
    MPI_Irecv(&AT(u, 1, 0), 1, column, left, 2, cart, &req[2]);
    MPI_Irecv(&AT(u, 1, n + 1), 1, column, right, 3, cart, &req[3]);
    MPI_Isend(&AT(u, n, 1), n, MPI_DOUBLE, down, 0, cart, &req[4]);
    MPI_Isend(&AT(u, 1, 1), n, MPI_DOUBLE, up, 1, cart, &req[5]);
    MPI_Isend(&AT(u, 1, n), 1, column, right, 2, cart, &req[6]);
    MPI_Isend(&AT(u, 1, 1), 1, column, left, 3, cart, &req[7]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    onlinews_region_end("halo_exchange");

    onlinews_region_begin("stencil");
    stencil_rows(u, unew, n, 1, n + 1);
    if (slow) consistency_check(u, unew, scratch, n, checked);
    onlinews_region_end("stencil");

    if (it % RESIDUAL_EVERY == 0 || it == iterations) {
      onlinews_region_begin("residual");
      double local = 0.0;
      for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j) {
          const double d = AT(unew, i, j) - AT(u, i, j);
          local += d * d;
        }
      double global;
      MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart);
      residual = sqrt(global);
      onlinews_region_end("residual");
    }

    double* t = u;
    u = unew;
    unew = t;
  }

  double local_sum = 0.0, checksum = 0.0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j) local_sum += AT(u, i, j);
  MPI_Reduce(&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  if (rank == 0)
    printf("heat2d: %d ranks (%d x %d), N = %d, %d iterations: residual %.6e, checksum %.10e\n",
           nprocs, dims[0], dims[1], n, iterations, residual, checksum);

  MPI_Type_free(&column);
  MPI_Comm_free(&cart);
  free(scratch);
  free(unew);
  free(u);
  MPI_Finalize();
  return 0;
}
