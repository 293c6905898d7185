/* Patient waits (runtime/patient.cpp): while the analysis has work, the
 * blocking receive, wait and probe calls poll their request and analyze in
 * between.  This program checks that the application sees exactly what MPI
 * promises for each of them, and that the wait states are unchanged.
 * 2 ranks, ONLINEWS_EPOCH_SECONDS=0 (patient.expect): every MPI_Barrier is a
 * cut, so each block below starts with a window to analyze, and rank 0
 * sleeps D = 0.1 s before it sends, so rank 1's analysis waits for rank 0's
 * (which sleeps) and rank 1 is inside its call, analyzing, for D:
 *
 *   recv      MPI_Recv(ANY_SOURCE, ANY_TAG): source, tag, count, data;
 *             Late Sender D in MPI_Recv
 *   probe     MPI_Probe(0, ANY_TAG) then MPI_Recv: Late Sender D in
 *             MPI_Probe
 *   waitany   {MPI_REQUEST_NULL, Irecv}: index 1, then index MPI_UNDEFINED
 *             once both are null; Late Sender D in MPI_Waitany
 *   waitsome  two Irecvs; rank 0 sends the second one's tag first, D later
 *             the first: outcount and indices as they complete, then
 *             MPI_UNDEFINED; Late Sender at least D in MPI_Waitsome
 *   waitall   Irecv + Isend, the statuses' tags; Late Sender D in
 *             MPI_Waitall
 *   wait      an inactive persistent receive completes at once with an
 *             empty status; started, it waits D: Late Sender D in MPI_Wait
 *   truncate  MPI_Recv of 2 ints for a message of 4 on a communicator with
 *             MPI_ERRORS_RETURN: error class MPI_ERR_TRUNCATE
 *
 * Rank 1 prints every mismatch and the program exits with 1 if there was
 * one.  Late Sender on rank 1 in MPI_Recv: D (recv; the probe's receive and
 * the truncated one do not wait). */
#include <stdlib.h>

#include "scenario.h"

static const double D = 0.1;
static int failures = 0;

static void expect(int ok, const char* what, int got) {
  if (!ok) {
    fprintf(stderr, "patient: FAIL %s (got %d)\n", what, got);
    ++failures;
  }
}

static void block(int rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) sleep_s(D);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank();
  int buf[4] = {1, 2, 3, 4}, in[4] = {0};
  MPI_Status st;

  block(rank);  // recv
  if (rank == 0) {
    MPI_Send(buf, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    expect(st.MPI_SOURCE == 0, "recv: source", st.MPI_SOURCE);
    expect(st.MPI_TAG == 7, "recv: tag", st.MPI_TAG);
    expect(n == 3, "recv: count", n);
    expect(in[0] == 1 && in[2] == 3, "recv: data", in[2]);
  }

  block(rank);  // probe
  if (rank == 0) {
    MPI_Send(buf, 2, MPI_INT, 1, 8, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    expect(st.MPI_TAG == 8, "probe: tag", st.MPI_TAG);
    expect(n == 2, "probe: count", n);
    MPI_Recv(in, 4, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  block(rank);  // waitany
  if (rank == 0) {
    MPI_Send(buf, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(in, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, &q[1]);
    int index = -1;
    MPI_Waitany(2, q, &index, &st);
    expect(index == 1, "waitany: index", index);
    expect(st.MPI_TAG == 9, "waitany: tag", st.MPI_TAG);
    expect(q[1] == MPI_REQUEST_NULL, "waitany: request freed", 0);
    MPI_Waitany(2, q, &index, &st);
    expect(index == MPI_UNDEFINED, "waitany: all null gives MPI_UNDEFINED", index);
  }

  block(rank);  // waitsome
  if (rank == 0) {
    MPI_Send(buf, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
    sleep_s(D);
    MPI_Send(buf, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Request q[2];
    int a = 0, b = 0, outcount = -1, idx[2] = {-1, -1};
    MPI_Status sts[2];
    MPI_Irecv(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(&b, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &q[1]);
    MPI_Waitsome(2, q, &outcount, idx, sts);
    expect(outcount == 1, "waitsome: first outcount", outcount);
    expect(idx[0] == 1, "waitsome: first index", idx[0]);
    expect(sts[0].MPI_TAG == 11, "waitsome: first tag", sts[0].MPI_TAG);
    MPI_Waitsome(2, q, &outcount, idx, sts);
    expect(outcount == 1, "waitsome: second outcount", outcount);
    expect(idx[0] == 0, "waitsome: second index", idx[0]);
    MPI_Waitsome(2, q, &outcount, idx, sts);
    expect(outcount == MPI_UNDEFINED, "waitsome: no active request gives MPI_UNDEFINED", outcount);
  }

  block(rank);  // waitall
  if (rank == 0) {
    MPI_Send(buf, 1, MPI_INT, 1, 12, MPI_COMM_WORLD);
    MPI_Recv(in, 4, MPI_INT, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Request q[2];
    MPI_Status sts[2];
    MPI_Irecv(in, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(buf, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, sts);
    expect(sts[0].MPI_TAG == 12, "waitall: receive's tag", sts[0].MPI_TAG);
    expect(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "waitall: requests freed", 0);
  }

  block(rank);  // wait
  if (rank == 0) {
    MPI_Send(buf, 1, MPI_INT, 1, 14, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Request q;
    MPI_Recv_init(in, 4, MPI_INT, 0, 14, MPI_COMM_WORLD, &q);
    st.MPI_TAG = 12345;
    MPI_Wait(&q, &st);  // inactive: returns at once, empty status
    expect(st.MPI_TAG == MPI_ANY_TAG && st.MPI_SOURCE == MPI_ANY_SOURCE, "wait: inactive request's empty status",
           st.MPI_TAG);
    MPI_Start(&q);
    MPI_Wait(&q, &st);
    expect(st.MPI_TAG == 14, "wait: tag", st.MPI_TAG);
    expect(q != MPI_REQUEST_NULL, "wait: a persistent request stays allocated", 0);
    MPI_Request_free(&q);
  }

  MPI_Comm quiet;
  MPI_Comm_dup(MPI_COMM_WORLD, &quiet);
  MPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
  block(rank);  // truncate
  if (rank == 0) {
    MPI_Send(buf, 4, MPI_INT, 1, 15, quiet);
  } else if (rank == 1) {
    const int rc = MPI_Recv(in, 2, MPI_INT, 0, 15, quiet, &st);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    expect(cls == MPI_ERR_TRUNCATE, "truncate: error class MPI_ERR_TRUNCATE", cls);
  }
  MPI_Comm_free(&quiet);

  MPI_Finalize();
  if (rank == 1 && failures == 0) printf("patient: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
