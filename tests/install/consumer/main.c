/* Rank 0 is 0.2 s late to a barrier inside a user region. */
#include <mpi.h>
#include <onlinews.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  onlinews_region_begin("phase");
  if (rank == 0) usleep(200000);
  MPI_Barrier(MPI_COMM_WORLD);
  onlinews_region_end("phase");
  MPI_Finalize();
  return onlinews_active();  /* 0: no longer recording after MPI_Finalize */
}
