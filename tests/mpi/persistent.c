/* Persistent requests, Sendrecv and Test polling on 2 ranks.
 *
 * 1. Persistent: rank 1 has a Recv_init and rank 0 a Send_init; 3 times,
 *    rank 1 starts its receive and waits in MPI_Wait while rank 0 sleeps
 *    0.1 s before MPI_Start + MPI_Wait -> rank 1: 0.3 s Late Sender in
 *    MPI_Wait, 3 instances.
 * 2. Startall: each rank starts a persistent send and receive to/from the
 *    other with MPI_Startall and completes them with MPI_Waitall; rank 0
 *    sleeps 0.15 s first -> rank 1 waits 0.15 s in MPI_Waitall.
 * 3. Sendrecv: rank 0 sleeps 0.2 s, then both exchange with MPI_Sendrecv ->
 *    rank 1 waits 0.2 s in MPI_Sendrecv.
 * 4. Test polling: rank 0 sleeps 0.1 s then sends; rank 1 polls MPI_Test on
 *    an Irecv: no Late Sender (polling is not blocking), one receive counted;
 *    the unsuccessful calls are folded into one MPI_Test visit of ~0.1 s.
 * Rank 1's Late Sender total: 0.3 + 0.15 + 0.2 = 0.65 s.
 */
#include "scenario.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), peer = 1 - rank;
  double a = 1, b = 0;
  MPI_Request req[2];
  if (rank == 0) MPI_Send_init(&a, 1, MPI_DOUBLE, 1, 10, MPI_COMM_WORLD, &req[0]);
  if (rank == 1) MPI_Recv_init(&b, 1, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, &req[0]);
  for (int it = 0; it < 3; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) sleep_s(0.1);
    MPI_Start(&req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&req[0]);

  MPI_Send_init(&a, 1, MPI_DOUBLE, peer, 20, MPI_COMM_WORLD, &req[0]);
  MPI_Recv_init(&b, 1, MPI_DOUBLE, peer, 20, MPI_COMM_WORLD, &req[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) sleep_s(0.15);
  MPI_Startall(2, req);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  MPI_Request_free(&req[0]);
  MPI_Request_free(&req[1]);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) sleep_s(0.2);
  MPI_Sendrecv(&a, 1, MPI_DOUBLE, peer, 30, &b, 1, MPI_DOUBLE, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_s(0.1);
    MPI_Send(&a, 1, MPI_DOUBLE, 1, 40, MPI_COMM_WORLD);
  } else {
    int done = 0;
    MPI_Irecv(&b, 1, MPI_DOUBLE, 0, 40, MPI_COMM_WORLD, &req[0]);
    while (!done) MPI_Test(&req[0], &done, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
