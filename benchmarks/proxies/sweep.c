/* sweep -- issue 11's in-house proxy of a wavefront (KBA) transport sweep:
 * a 2-D process grid (MPI_Dims_create + MPI_Cart_create), each rank an
 * nx x nx x nz block processed in chunks of kb planes.  Every source iteration
 * sweeps the four directions (+-x, +-y): for each chunk a rank receives its
 * inflow faces from the two upstream neighbours (blocking MPI_Recv), solves
 * its cells in wavefront order, and sends the outflow faces downstream
 * (blocking MPI_Send): a pipeline whose ranks wait on each other in turn, with
 * no world collective inside a sweep.  After the four sweeps an MPI_Allreduce
 * of the scalar flux change (the convergence check).
 *
 *   mpirun -np P ./sweep_plain [nx [nz [iterations]]]   (default 32, 64, 12; kb = 4)
 *
 * Rank 0 prints "loop <s> change <d> checksum <c>": the loop time (MPI_Wtime
 * between barriers) and numbers that must not change with the analyzer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "onlinews.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size, rank, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  const int nx = argc > 1 ? atoi(argv[1]) : 32;
  const int nz = argc > 2 ? atoi(argv[2]) : 64;
  const int iterations = argc > 3 ? atoi(argv[3]) : 12;
  const int kb = 4;
  if (nx < 1 || nz < kb || nz % kb != 0 || iterations < 1) {
    if (rank == 0) fprintf(stderr, "sweep: nx >= 1, nz a multiple of %d, iterations >= 1 expected\n", kb);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t cells = (size_t)nx * (size_t)nx * (size_t)nz, face = (size_t)nx * (size_t)kb;
  double* flux = calloc(cells, sizeof(double));   // scalar flux, summed over the directions
  double* source = malloc(cells * sizeof(double));
  double* xin = malloc(face * sizeof(double));     // inflow across x (one per y row and plane)
  double* yin = malloc(face * sizeof(double));     // inflow across y (one per x column and plane)
  double* ycol = malloc((size_t)nx * sizeof(double));
  for (size_t c = 0; c < cells; ++c) source[c] = 1.0 + (double)((c * 7 + (size_t)rank * 13) % 5) * 0.1;
  int xm, xp, ym, yp;  // neighbours at -x, +x, -y, +y
  MPI_Cart_shift(cart, 0, 1, &xm, &xp);
  MPI_Cart_shift(cart, 1, 1, &ym, &yp);
  const double cx = 0.7, cy = 0.5, sigma = 1.3;
  double change = 0, checksum = 0;
  MPI_Barrier(cart);
  const double t0 = MPI_Wtime();
  for (int it = 0; it < iterations; ++it) {
    double local_change = 0;
    for (int dir = 0; dir < 4; ++dir) {
      const int sx = dir & 1 ? -1 : 1, sy = dir & 2 ? -1 : 1;
      const int up_x = sx > 0 ? xm : xp, down_x = sx > 0 ? xp : xm;
      const int up_y = sy > 0 ? ym : yp, down_y = sy > 0 ? yp : ym;
      for (int z0 = 0; z0 < nz; z0 += kb) {
        const int tag = dir * 1000 + z0 / kb;
        onlinews_region_begin("inflow");
        MPI_Recv(xin, (int)face, MPI_DOUBLE, up_x, tag, cart, MPI_STATUS_IGNORE);
        MPI_Recv(yin, (int)face, MPI_DOUBLE, up_y, tag, cart, MPI_STATUS_IGNORE);
        if (up_x == MPI_PROC_NULL) for (size_t f = 0; f < face; ++f) xin[f] = 0;
        if (up_y == MPI_PROC_NULL) for (size_t f = 0; f < face; ++f) yin[f] = 0;
        onlinews_region_end("inflow");
        onlinews_region_begin("solve");
        for (int z = z0; z < z0 + kb; ++z) {
          double* xrow = xin + (size_t)(z - z0) * (size_t)nx;  // per j: inflow across x
          for (int i = 0; i < nx; ++i) ycol[i] = yin[(size_t)(z - z0) * (size_t)nx + (size_t)i];
          for (int jj = 0; jj < nx; ++jj) {
            const int j = sy > 0 ? jj : nx - 1 - jj;
            double psi_x = xrow[j];
            for (int ii = 0; ii < nx; ++ii) {
              const int i = sx > 0 ? ii : nx - 1 - ii;
              const size_t c = ((size_t)z * (size_t)nx + (size_t)j) * (size_t)nx + (size_t)i;
              const double psi = (source[c] + 0.25 * flux[c] * 0.1 + cx * psi_x + cy * ycol[i]) / (sigma + cx + cy);
              psi_x = psi;
              ycol[i] = psi;
              local_change += psi * 1e-6;
              flux[c] = 0.5 * flux[c] + psi;
            }
            xrow[j] = psi_x;
          }
          for (int i = 0; i < nx; ++i) yin[(size_t)(z - z0) * (size_t)nx + (size_t)i] = ycol[i];
        }
        onlinews_region_end("solve");
        onlinews_region_begin("outflow");
        MPI_Send(xin, (int)face, MPI_DOUBLE, down_x, tag, cart);
        MPI_Send(yin, (int)face, MPI_DOUBLE, down_y, tag, cart);
        onlinews_region_end("outflow");
      }
    }
    MPI_Allreduce(&local_change, &change, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  MPI_Barrier(cart);
  const double loop = MPI_Wtime() - t0;
  double sum = 0;
  for (size_t c = 0; c < cells; ++c) sum += flux[c];
  MPI_Reduce(&sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  if (rank == 0) {
    printf("sweep: %d ranks (%d x %d), nx = %d, nz = %d, %d iterations: loop %.6f change %.10e checksum %.10e\n", size,
           dims[0], dims[1], nx, nz, iterations, loop, change, checksum);
  }
  free(flux);
  free(source);
  free(xin);
  free(yin);
  free(ycol);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
