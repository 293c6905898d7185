/* MPI_Comm_spawn passes through onlinews (issue 12 part 3): 2 ranks spawn
 * one more process of this program, which sends 42 to the parents' rank 0
 * over the parent inter-communicator; rank 0 checks it (exit code 3 if
 * wrong).  The spawned process is a job of its own: onlinews analyzes it on
 * its own, says so once and writes its file apart (<output>.spawned.h5);
 * the calls on the inter-communicator are time only (untracked_calls >= 1
 * in the parents' file, which keeps the name asked for: ranks == 2). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  int rank = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (parent == MPI_COMM_NULL) {
    MPI_Comm child;
    int errs[1];
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, errs);
    int v = -1;
    if (rank == 0) {
      MPI_Recv(&v, 1, MPI_INT, 0, 1, child, MPI_STATUS_IGNORE);
      if (v != 42) bad = 1;
    }
    MPI_Comm_disconnect(&child);
    printf("rank %d spawn: %s\n", rank, bad ? "WRONG" : "the child's 42 arrived");
  } else {
    int v = 42;
    MPI_Send(&v, 1, MPI_INT, 0, 1, parent);
    MPI_Comm_disconnect(&parent);
  }
  MPI_Finalize();
  return bad ? 3 : 0;
}
