/* Process grids for the ParaView view (tests/tools/test_paraview.py).
 * Every mode ends the same way: rank r sleeps 0.1 r s, then MPI_Barrier on
 * MPI_COMM_WORLD, where it waits 0.1 (n - 1 - r) s for the last rank.
 *   cart   6 ranks: a 2 x 3 Cartesian communicator (periodic in the second
 *          dimension) created, without reordering, on a communicator whose
 *          ranks run backwards (MPI_Comm_split with key n - 1 - r), so world
 *          rank r has Cartesian rank 5 - r, coordinates ((5 - r) / 3,
 *          (5 - r) % 3), and grid cell 5 - r: the barrier wait in cell c is
 *          0.1 c s.  Its rows (MPI_Cart_sub) span fewer ranks: not the grid.
 *   graph  a ring as a distributed graph (MPI_Dist_graph_create_adjacent):
 *          rank r's out-edge goes to r + 1 mod n.
 *   plain  no topology. */
#include <string.h>

#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "plain";
  MPI_Comm extra[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  if (strcmp(mode, "cart") == 0 && size == 6) {
    int dims[2] = {2, 3}, periods[2] = {0, 1}, remain[2] = {0, 1};
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &extra[0]);
    MPI_Cart_create(extra[0], 2, dims, periods, 0, &extra[1]);
    MPI_Cart_sub(extra[1], remain, &extra[2]);
  } else if (strcmp(mode, "graph") == 0) {
    /* (Weights 1: GCC takes Open MPI's MPI_UNWEIGHTED for a too short array.) */
    int from = (rank + size - 1) % size, to = (rank + 1) % size, w_in = 1, w_out = 1;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &w_in, 1, &to, &w_out, MPI_INFO_NULL, 0, &extra[0]);
  }
  sleep_s(0.1 * rank);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 2; i >= 0; --i) {
    if (extra[i] != MPI_COMM_NULL) MPI_Comm_free(&extra[i]);
  }
  MPI_Finalize();
  return 0;
}
