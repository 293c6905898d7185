/* Collective wait states on 4 ranks; the first argument picks the pattern.
 * Every mode aligns the ranks with a barrier, then runs the measured part
 * twice inside the user region "measured" (so the checks exclude the
 * alignment).  With r = rank:
 *
 *   barrier    r sleeps 0.1 r, MPI_Barrier      wait (0.3 - 0.1 r) s each time
 *   allreduce  r sleeps 0.1 r, MPI_Allreduce    N x N wait (0.3 - 0.1 r) s
 *   alltoall   r sleeps 0.1 r, MPI_Alltoall     N x N wait (0.3 - 0.1 r) s
 *   bcast      root 2 sleeps 0.3, MPI_Bcast     ranks 0, 1, 3 wait 0.3 s
 *   scatter    root 2 sleeps 0.3, MPI_Scatter   ranks 0, 1, 3 wait 0.3 s
 *   reduce     r sleeps 0.1 r, MPI_Reduce to 0  root waits for rank 3: 0.3 s
 *   gather     r sleeps 0.1 r, MPI_Gather to 0  root waits for rank 3: 0.3 s
 *   scan       r sleeps 0.1 (3 - r), MPI_Scan   rank r waits for rank 0: 0.1 r s
 *   scanmsg    rank 0 sleeps 0.3 in "scan_work", MPI_Scan; rank 2 first receives
 *              a message that rank 1 sends after its scan: rank 1 waits 0.3 s in
 *              the scan (for rank 0), rank 2 0.3 s in MPI_Recv (for rank 1),
 *              rank 3 0.3 s in the scan (for rank 2, which enters it last).
 *              Not portable: it needs a scan in which rank 1 does not wait
 *              for ranks 2-3 (Open MPI's linear one; it deadlocks on MPICH)
 *   finalize   r sleeps 0.1 r before MPI_Finalize (once): waits (0.3 - 0.1 r) s
 */
#include <string.h>

#include "onlinews.h"
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  const char* mode = argc > 1 ? argv[1] : "barrier";
  double in[4] = {1, 2, 3, 4}, out[4];
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "finalize") == 0) {
    sleep_s(0.1 * rank);
    MPI_Finalize();
    return 0;
  }
  for (int it = 0; it < 2; ++it) {
    onlinews_region_begin("measured");
    if (strcmp(mode, "barrier") == 0) {
      sleep_s(0.1 * rank);
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "allreduce") == 0) {
      sleep_s(0.1 * rank);
      MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(mode, "alltoall") == 0) {
      sleep_s(0.1 * rank);
      MPI_Alltoall(in, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    } else if (strcmp(mode, "bcast") == 0) {
      if (rank == 2) sleep_s(0.3);
      MPI_Bcast(in, 4, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    } else if (strcmp(mode, "scatter") == 0) {
      if (rank == 2) sleep_s(0.3);
      MPI_Scatter(in, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    } else if (strcmp(mode, "reduce") == 0) {
      sleep_s(0.1 * rank);
      MPI_Reduce(in, out, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (strcmp(mode, "gather") == 0) {
      sleep_s(0.1 * rank);
      MPI_Gather(in, 1, MPI_DOUBLE, out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else if (strcmp(mode, "scan") == 0) {
      sleep_s(0.1 * (3 - rank));
      MPI_Scan(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(mode, "scanmsg") == 0) {
      if (rank == 0) {
        onlinews_region_begin("scan_work");
        sleep_s(0.3);
        onlinews_region_end("scan_work");
      }
      if (rank == 2) MPI_Recv(out, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Scan(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 1) MPI_Send(in, 1, MPI_DOUBLE, 2, 5, MPI_COMM_WORLD);
    }
    onlinews_region_end("measured");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
