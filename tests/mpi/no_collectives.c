/* Programs without any collective in their loop (step 4: requested cuts).
 * 4 ranks; argv[1] picks the program, argv[2] the iterations N (default
 * 1500).  Every wait comes from sleeps inside user regions; after MPI_Init
 * a barrier aligns the ranks, and nothing but MPI_Finalize follows the loop.
 *
 *   pipeline  rank 0 produces an item every P = 0.5 ms (region "produce")
 *             and sends it on; rank 1 filters it (0.5 ms, "filter"); rank 2
 *             is the slow stage (S = 1 ms, "slow_stage"); rank 3 consumes it
 *             (0.5 ms, "consume").  Blocking MPI_Send/MPI_Recv of 8 doubles.
 *             The first item reaches rank s after s x 0.5 ms (rank 3: 2 ms);
 *             from then on rank 2 passes one item every S, so rank 3 waits
 *             S - 0.5 ms = 0.5 ms for every item: Late Sender on rank 3 =
 *             2 ms + (N - 1) x 0.5 ms (0.75 s for N = 1500); ranks 1 and 2
 *             wait only for the first item (0.5 ms and 1 ms); ranks 0 and 1
 *             are done after about N x 0.5 ms and wait in MPI_Finalize.  All
 *             of rank 3's waiting is caused by rank 2's slow_stage (delay
 *             costs there, short-term: rank 2 never waits), and the critical
 *             path runs through it: N x S of slow_stage on the path.
 *   farm      rank 0 is a master with N tasks for workers 1-3: one task to
 *             each, then for every result received with MPI_ANY_SOURCE the
 *             next task to the worker that sent it, then a stop message to
 *             each.  A task takes T = 1.5 ms ("task").  The workers finish
 *             a task every T between them, so the master waits in MPI_Recv
 *             for most of the N x T / 3 ms the farm takes (Late Sender about
 *             0.75 s for N = 1500), caused by the workers' tasks; the
 *             workers wait only for the master's replies (microseconds).
 *   ring      each rank posts MPI_Irecv from its left neighbour and MPI_Isend
 *             to its right one, computes ("compute": 1 ms on ranks 0-2,
 *             1.5 ms on rank 3) and completes both with MPI_Waitall.  The
 *             ring runs at rank 3's pace, so ranks 0-2 wait 0.5 ms per
 *             iteration in MPI_Waitall (Late Sender 0.5 x N ms each, 0.75 s
 *             for N = 1500) and rank 3 does not wait.  Rank 0 waits for rank
 *             3 directly; rank 1 waits for rank 0, whose own waiting delayed
 *             it: all delay costs lie in rank 3's compute (short-term for
 *             rank 0's waits, long-term for ranks 1 and 2), and the critical
 *             path runs through it.
 *   handshake synchronizing messages whose receive is posted late, so that
 *             many cross a requested cut while the sender waits (Late
 *             Receiver).  Ranks 0 and 2 each send an item to rank 1 and 3
 *             every iteration: they prepare it (P = 10 ms, "prepare"), rank
 *             0 sends it with a blocking MPI_Ssend, rank 2 with MPI_Issend
 *             and MPI_Wait.  Ranks 1 and 3 digest the previous item first (D
 *             = 20 ms, "digest"), then post MPI_Recv.  The receivers set the
 *             pace: every send waits D - P = 10 ms for its receive (Late
 *             Receiver on ranks 0 and 2: N x 10 ms each, 2.25 s for N = 225),
 *             caused by the digest (delay costs there, short-term); the
 *             receivers never wait (Late Sender 0), and the critical path
 *             runs through the digest (N x D).  Run with
 *             ONLINEWS_EPOCH_SECONDS=0.05, a cut falls inside a waiting send
 *             about every other time.
 *
 * tests/mpi/requested_cuts.py runs each with a buffer small enough for tens
 * of requested cuts and as one epoch, and compares. */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

static void pipeline(int rank, int n) {
  double item[8] = {0};
  static const char* const names[] = {"produce", "filter", "slow_stage", "consume"};
  static const double work[] = {0.0005, 0.0005, 0.001, 0.0005};
  for (int i = 0; i < n; ++i) {
    if (rank > 0) MPI_Recv(item, 8, MPI_DOUBLE, rank - 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    region_sleep(names[rank], work[rank]);
    item[0] = i;
    if (rank < 3) MPI_Send(item, 8, MPI_DOUBLE, rank + 1, i, MPI_COMM_WORLD);
  }
}

enum { kTask = 1, kResult = 2, kStop = 3 };

static void farm(int rank, int size, int n) {
  double buf[4] = {0};
  if (rank == 0) {
    int sent = 0, done = 0;
    for (int w = 1; w < size && sent < n; ++w, ++sent) MPI_Send(buf, 4, MPI_DOUBLE, w, kTask, MPI_COMM_WORLD);
    while (done < n) {
      MPI_Status st;
      MPI_Recv(buf, 4, MPI_DOUBLE, MPI_ANY_SOURCE, kResult, MPI_COMM_WORLD, &st);
      ++done;
      if (sent < n) {
        MPI_Send(buf, 4, MPI_DOUBLE, st.MPI_SOURCE, kTask, MPI_COMM_WORLD);
        ++sent;
      }
    }
    for (int w = 1; w < size; ++w) MPI_Send(buf, 4, MPI_DOUBLE, w, kStop, MPI_COMM_WORLD);
  } else {
    for (;;) {
      MPI_Status st;
      MPI_Recv(buf, 4, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      if (st.MPI_TAG == kStop) break;
      region_sleep("task", 0.0015);
      MPI_Send(buf, 4, MPI_DOUBLE, 0, kResult, MPI_COMM_WORLD);
    }
  }
}

static void ring(int rank, int size, int n) {
  double out[8] = {0}, in[8];
  for (int i = 0; i < n; ++i) {
    MPI_Request q[2];
    MPI_Irecv(in, 8, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(out, 8, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &q[1]);
    region_sleep("compute", rank == 3 ? 0.0015 : 0.001);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  }
}

static void handshake(int rank, int n) {
  double item[8] = {0};
  for (int i = 0; i < n; ++i) {
    if (rank % 2 == 0) {
      region_sleep("prepare", 0.010);
      item[0] = i;
      if (rank == 0) {
        MPI_Ssend(item, 8, MPI_DOUBLE, rank + 1, i, MPI_COMM_WORLD);
      } else {
        MPI_Request q;
        MPI_Issend(item, 8, MPI_DOUBLE, rank + 1, i, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
    } else {
      region_sleep("digest", 0.020);
      MPI_Recv(item, 8, MPI_DOUBLE, rank - 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank(), size = world_size();
  const char* mode = argc > 1 ? argv[1] : "pipeline";
  const int n = argc > 2 ? atoi(argv[2]) : 1500;
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "no_collectives: needs 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "pipeline") == 0) pipeline(rank, n);
  if (strcmp(mode, "farm") == 0) farm(rank, size, n);
  if (strcmp(mode, "ring") == 0) ring(rank, size, n);
  if (strcmp(mode, "handshake") == 0) handshake(rank, n);
  MPI_Finalize();
  return 0;
}
