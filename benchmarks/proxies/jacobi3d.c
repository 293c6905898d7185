/* jacobi3d -- issue 11's in-house proxy of a 3-D structured-grid solver:
 * Jacobi iterations of the 7-point Laplacian on a 3-D Cartesian process grid
 * (MPI_Dims_create + MPI_Cart_create, non-periodic), each rank an n^3 block
 * with one ghost layer.  Every iteration: the six faces packed and exchanged
 * with MPI_Irecv/MPI_Isend/MPI_Waitall (MPI_PROC_NULL at the borders), the
 * update, and an MPI_Allreduce of the residual (a synchronizing cut every
 * iteration is possible).  The boundary x = 0 of the domain is held at 1.
 *
 *   mpirun -np P ./jacobi3d_plain [n [iterations]]      (default 48, 200)
 *
 * Rank 0 prints "loop <s> residual <r> checksum <c>": the loop time
 * (MPI_Wtime between barriers) and numbers that must not change with the
 * analyzer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onlinews.h"

#define IDX(i, j, k) (((size_t)(i) * (size_t)(n + 2) + (size_t)(j)) * (size_t)(n + 2) + (size_t)(k))

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size, rank, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 3, coords);
  const int n = argc > 1 ? atoi(argv[1]) : 48;
  const int iterations = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 2 || iterations < 1) {
    if (rank == 0) fprintf(stderr, "jacobi3d: n >= 2 and iterations >= 1 expected\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t cells = (size_t)(n + 2) * (size_t)(n + 2) * (size_t)(n + 2), face = (size_t)n * (size_t)n;
  double* u = calloc(cells, sizeof(double));
  double* v = calloc(cells, sizeof(double));
  double* sendbuf = malloc(6 * face * sizeof(double));
  double* recvbuf = malloc(6 * face * sizeof(double));
  int nb[6];  // -x, +x, -y, +y, -z, +z
  for (int d = 0; d < 3; ++d) MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]);
  if (coords[0] == 0) {  // the domain's x = 0 face is held at 1
    for (int j = 0; j < n + 2; ++j)
      for (int k = 0; k < n + 2; ++k) u[IDX(0, j, k)] = v[IDX(0, j, k)] = 1.0;
  }
  double residual = 0;
  MPI_Barrier(cart);
  const double t0 = MPI_Wtime();
  for (int it = 0; it < iterations; ++it) {
    onlinews_region_begin("halo");
    MPI_Request req[12];
    int nr = 0;
    for (int f = 0; f < 6; ++f) {
      const int d = f / 2, side = f % 2;  // plane index of the face to send, and of the ghost to fill
      const int send_at = side ? n : 1;
      double* s = sendbuf + (size_t)f * face;
      size_t m = 0;
      for (int a = 1; a <= n; ++a)
        for (int b = 1; b <= n; ++b)
          s[m++] = d == 0 ? u[IDX(send_at, a, b)] : d == 1 ? u[IDX(a, send_at, b)] : u[IDX(a, b, send_at)];
      MPI_Irecv(recvbuf + (size_t)f * face, (int)face, MPI_DOUBLE, nb[f], f ^ 1, cart, &req[nr++]);
      MPI_Isend(s, (int)face, MPI_DOUBLE, nb[f], f, cart, &req[nr++]);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    for (int f = 0; f < 6; ++f) {
      if (nb[f] == MPI_PROC_NULL) continue;
      const int d = f / 2, ghost = f % 2 ? n + 1 : 0;
      const double* r = recvbuf + (size_t)f * face;
      size_t m = 0;
      for (int a = 1; a <= n; ++a)
        for (int b = 1; b <= n; ++b) {
          if (d == 0) u[IDX(ghost, a, b)] = r[m++];
          else if (d == 1) u[IDX(a, ghost, b)] = r[m++];
          else u[IDX(a, b, ghost)] = r[m++];
        }
    }
    onlinews_region_end("halo");
    onlinews_region_begin("update");
    double local = 0;
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j)
        for (int k = 1; k <= n; ++k) {
          const double x = (u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] + u[IDX(i, j + 1, k)] +
                            u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)]) / 6.0;
          local += (x - u[IDX(i, j, k)]) * (x - u[IDX(i, j, k)]);
          v[IDX(i, j, k)] = x;
        }
    double* t = u;
    u = v;
    v = t;
    onlinews_region_end("update");
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  MPI_Barrier(cart);
  const double loop = MPI_Wtime() - t0;
  double sum = 0, total = 0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      for (int k = 1; k <= n; ++k) sum += u[IDX(i, j, k)];
  MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  if (rank == 0) {
    printf("jacobi3d: %d ranks (%d x %d x %d), n = %d, %d iterations: loop %.6f residual %.10e checksum %.10e\n",
           size, dims[0], dims[1], dims[2], n, iterations, loop, residual, total);
  }
  free(u);
  free(v);
  free(sendbuf);
  free(recvbuf);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
