/* MPI corner cases pass through onlinews unchanged (issue 12 part 3, in
 * part): 2 ranks.  Each rank checks what MPI returned against MPI's rules,
 * prints a bit per broken rule and exits with 3 if any is.  corner.expect
 * compares that with corner_plain, the same program without onlinews: the
 * output and exit code must be the same (MPICH 4.0.2 itself breaks rule 2:
 * the status of an MPI_Irecv from MPI_PROC_NULL keeps a source of 0).
 * The rules:
 *   MPI_PROC_NULL sends and receives (status source MPI_PROC_NULL, tag
 *   MPI_ANY_TAG, buffer untouched), also through MPI_Irecv + MPI_Wait;
 *   a zero-byte MPI_Sendrecv (count 0);
 *   a derived datatype (MPI_Type_vector of 3 blocks of 2 ints, stride 4):
 *   6 ints = 24 bytes each way, the gaps untouched;
 *   MPI_ERRORS_RETURN: a send to a rank that does not exist and a receive
 *   with a negative count return an error instead of aborting;
 *   MPI_ANY_SOURCE / MPI_ANY_TAG and a cancelled receive
 *   (MPI_Test_cancelled);
 *   MPI_Request_free of an active MPI_Isend (the message still arrives:
 *   rank 1 receives 11 after the barrier that follows) and of an inactive
 *   persistent request.
 * onlinews counts the bytes of MPI_Sendrecv: 0 + 24 sent and received per
 * rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  int peer = 1 - rank, bad = 0;
  MPI_Status st; MPI_Request r;
  /* MPI_PROC_NULL */
  int x = 5;
  MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
  MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  if (st.MPI_SOURCE != MPI_PROC_NULL || st.MPI_TAG != MPI_ANY_TAG || x != 5) bad |= 1;
  MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r); MPI_Wait(&r, &st);
  if (st.MPI_SOURCE != MPI_PROC_NULL) bad |= 2;
  /* zero bytes */
  MPI_Sendrecv(NULL, 0, MPI_INT, peer, 2, NULL, 0, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
  int n = -1; MPI_Get_count(&st, MPI_INT, &n); if (n != 0) bad |= 4;
  /* derived datatype: vector of 3 blocks of 2 ints, stride 4 */
  MPI_Datatype vec; MPI_Type_vector(3, 2, 4, MPI_INT, &vec); MPI_Type_commit(&vec);
  int buf[12]; for (int i = 0; i < 12; ++i) buf[i] = rank * 100 + i;
  int in[12] = {0};
  MPI_Sendrecv(buf, 1, vec, peer, 3, in, 1, vec, peer, 3, MPI_COMM_WORLD, &st);
  if (in[0] != peer * 100 || in[5] != peer * 100 + 5 || in[2] != 0) bad |= 8;
  MPI_Get_count(&st, MPI_INT, &n); if (n != 6) bad |= 16;
  MPI_Type_free(&vec);
  /* errors returned */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 4, MPI_COMM_WORLD);
  if (rc == MPI_SUCCESS) bad |= 32;
  rc = MPI_Recv(&x, -1, MPI_INT, peer, 4, MPI_COMM_WORLD, &st);
  if (rc == MPI_SUCCESS) bad |= 64;
  /* wildcards and cancel */
  if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  else { MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st); if (st.MPI_SOURCE != 0 || st.MPI_TAG != 7) bad |= 128; }
  MPI_Irecv(&x, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &r); MPI_Cancel(&r); MPI_Wait(&r, &st);
  int c = 0; MPI_Test_cancelled(&st, &c); if (!c) bad |= 256;
  /* MPI_Request_free: an active send request, an inactive persistent one */
  static int eleven = 11;
  if (rank == 0) { MPI_Isend(&eleven, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &r); MPI_Request_free(&r); if (r != MPI_REQUEST_NULL) bad |= 512; }
  MPI_Send_init(&x, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &r); MPI_Request_free(&r); if (r != MPI_REQUEST_NULL) bad |= 1024;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) { MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &st); if (x != 11) bad |= 2048; }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d corner cases: %s (%d)\n", rank, bad ? "rules broken" : "as MPI says", bad);
  MPI_Finalize();
  return bad ? 3 : 0;
}
