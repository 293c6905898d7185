/* Threaded rings under MPI_THREAD_MULTIPLE (issue 13).  Every rank runs
 * THREADS threads (the main thread is thread 0); each thread sends to the
 * next rank and receives from the previous one on its own tag, over three
 * communicators in turn (MPI_COMM_WORLD, a duplicate, and a split with the
 * ranks reversed), ITERS iterations per repetition:
 *   it % 4 == 0: blocking MPI_Send / MPI_Recv (even comm ranks send first);
 *   it % 4 == 1: MPI_Irecv(MPI_ANY_SOURCE) + MPI_Isend + MPI_Waitall;
 *   it % 4 == 2: the same with MPI_STATUSES_IGNORE (the payload is checked);
 *   it % 4 == 3: MPI_Sendrecv with MPI_STATUS_IGNORE.
 * Message lengths vary (1..64 doubles).  The program checks every status
 * (source, tag, count) and every payload itself and exits with 1 on any
 * mismatch.
 *
 * After each of the REPS repetitions the main thread alone sleeps (rank 0:
 * 0.1 s) and calls MPI_Barrier, so ranks 1..3 wait REPS x 0.1 s at the
 * barrier: the MPI thread's collectives stay analyzed although the other
 * threads use MPI_COMM_WORLD for point-to-point messages.  Every rank
 * notes the time (CLOCK_MONOTONIC: the test runs on one node) as it calls
 * each of these barriers; rank 0 prints each rank's waiting by those times
 * (the last entry minus its own, summed): on a loaded machine rank 0 may
 * come later than its 0.1 s, or another rank later than rank 0 (descheduled
 * after its sleep or its threads).
 *
 * Then every rank calls COLLS MPI_Allreduce on a duplicate of MPI_COMM_WORLD
 * (eligible for cuts), even ranks from the main thread, odd ranks from
 * thread 1: ranks that call the same world collective from different
 * threads must still agree on the cut decisions (one of them hung before).
 *
 * Rank 0 prints "collective calls of other threads: M", the allreduces the
 * threads other than the main thread made on all ranks: onlinews analyzes
 * the point-to-point calls of every thread and records the collectives of
 * threads other than the main thread as time only (other_thread_calls).
 *
 * At the end every rank asks MPI_Query_thread (not intercepted) whether the
 * thread level is still the one MPI_Init_thread provided; a tool that
 * lowers it makes the MPI library drop its locks, and threads then receive
 * each other's messages only now and then -- this check sees it every time.
 *
 * Usage: thread_ring [THREADS=3] [ITERS=120] [REPS=2] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario.h"

#define MAX_THREADS 8
#define NCOMM 3
static MPI_Comm comms[NCOMM];
static int iters = 120;
static long colls[MAX_THREADS];  /* collective calls per thread */
static int errors = 0;
#define COLLS 40
#define MAX_REPS 64  /* repetitions whose barrier entries are measured */
static MPI_Comm coll_comm;

/* COLLS world-spanning allreduces; every rank checks the sum. */
static void* world_colls(void* arg) {
  const int t = (int)(long)arg;
  for (int i = 0; i < COLLS; ++i) {
    long mine = world_rank() + i, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, coll_comm);
    const long n = world_size();
    if (sum != n * (n - 1) / 2 + n * i) __sync_fetch_and_add(&errors, 1);
    colls[t] += 1;
  }
  return NULL;
}

static double payload(int comm_rank, int thread, int it, int i) { return comm_rank * 1e6 + thread * 1e4 + it * 10 + i % 10; }

static void check(int thread, int it, int prev, int n, const double* in, const MPI_Status* st) {
  int bad = 0;
  if (st != NULL) {
    int count = -1;
    MPI_Get_count(st, MPI_DOUBLE, &count);
    bad = st->MPI_SOURCE != prev || st->MPI_TAG != thread || count != n;
    if (bad) {
      fprintf(stderr, "rank %d thread %d iteration %d: status source %d tag %d count %d, expected %d %d %d\n",
              world_rank(), thread, it, st->MPI_SOURCE, st->MPI_TAG, count, prev, thread, n);
    }
  }
  for (int i = 0; i < n && !bad; ++i) {
    if (in[i] != payload(prev, thread, it, i)) {
      fprintf(stderr, "rank %d thread %d iteration %d: payload %g at %d, expected %g\n", world_rank(), thread, it,
              in[i], i, payload(prev, thread, it, i));
      bad = 1;
    }
  }
  if (bad) __sync_fetch_and_add(&errors, 1);
}

static void* ring(void* arg) {
  const int t = (int)(long)arg;
  double out[64], in[64];
  for (int it = 0; it < iters; ++it) {
    MPI_Comm c = comms[it % NCOMM];
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    const int next = (r + 1) % s, prev = (r + s - 1) % s, n = 1 + (it * 7 + t) % 64;
    for (int i = 0; i < n; ++i) out[i] = payload(r, t, it, i);
    for (int i = 0; i < 64; ++i) in[i] = -1;
    MPI_Status st, sts[2];
    MPI_Request q[2];
    switch (it % 4) {
      case 0:
        if (r % 2 == 0) {
          MPI_Send(out, n, MPI_DOUBLE, next, t, c);
          MPI_Recv(in, 64, MPI_DOUBLE, prev, t, c, &st);
        } else {
          MPI_Recv(in, 64, MPI_DOUBLE, prev, t, c, &st);
          MPI_Send(out, n, MPI_DOUBLE, next, t, c);
        }
        check(t, it, prev, n, in, &st);
        break;
      case 1:
      case 2:
        MPI_Irecv(in, 64, MPI_DOUBLE, MPI_ANY_SOURCE, t, c, &q[0]);
        MPI_Isend(out, n, MPI_DOUBLE, next, t, c, &q[1]);
        MPI_Waitall(2, q, it % 4 == 1 ? sts : MPI_STATUSES_IGNORE);
        check(t, it, prev, n, in, it % 4 == 1 ? &sts[0] : NULL);
        break;
      default:
        MPI_Sendrecv(out, n, MPI_DOUBLE, next, t, in, 64, MPI_DOUBLE, prev, t, c, MPI_STATUS_IGNORE);
        check(t, it, prev, n, in, NULL);
        break;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int rank = world_rank(), size = world_size();
  const int threads = argc > 1 ? atoi(argv[1]) : 3;
  if (argc > 2) iters = atoi(argv[2]);
  const int reps = argc > 3 ? atoi(argv[3]) : 2;
  double entered[MAX_REPS] = {0};  /* node_seconds() as this rank called each repetition's barrier */
  if (provided != MPI_THREAD_MULTIPLE || threads < 1 || threads > MAX_THREADS || reps < 0 || reps > MAX_REPS) {
    if (rank == 0) {
      fprintf(stderr, "thread_ring: needs MPI_THREAD_MULTIPLE, 1..%d threads and 0..%d repetitions\n", MAX_THREADS,
              MAX_REPS);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  comms[0] = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[2]);
  for (int rep = 0; rep < reps; ++rep) {
    pthread_t th[MAX_THREADS];
    for (int t = 1; t < threads; ++t) pthread_create(&th[t], NULL, ring, (void*)(long)t);
    ring((void*)0);
    for (int t = 1; t < threads; ++t) pthread_join(th[t], NULL);
    if (rank == 0) sleep_s(0.1);
    entered[rep] = node_seconds();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &coll_comm);
  if (rank % 2 == 1 && threads > 1) {
    pthread_t th;
    pthread_create(&th, NULL, world_colls, (void*)1L);
    pthread_join(th, NULL);
  } else {
    world_colls((void*)0);
  }
  MPI_Comm_free(&coll_comm);
  int level = -1;
  MPI_Query_thread(&level);
  if (level != provided) {
    fprintf(stderr, "rank %d: MPI_Query_thread says %d, but MPI_Init_thread provided %d\n", rank, level, provided);
    errors += 1;
  }
  long other = 0, all_other = 0;
  for (int t = 1; t < threads; ++t) other += colls[t];
  int all_errors = 0;
  MPI_Reduce(&other, &all_other, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  double* all_entered = rank == 0 ? calloc((size_t)size * MAX_REPS, sizeof(double)) : NULL;
  MPI_Gather(entered, MAX_REPS, MPI_DOUBLE, all_entered, MAX_REPS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("collective calls of other threads: %ld\nstatus errors: %d\n", all_other, all_errors);
    for (int r = 0; r < size; ++r) {
      double waited = 0;
      for (int rep = 0; rep < reps; ++rep) {
        double last = 0;
        for (int q = 0; q < size; ++q) {
          if (all_entered[q * MAX_REPS + rep] > last) last = all_entered[q * MAX_REPS + rep];
        }
        waited += last - all_entered[r * MAX_REPS + rep];
      }
      printf("barrier wait by the program's clock: rank %d %.6f\n", r, waited);
    }
    free(all_entered);
  }
  MPI_Comm_free(&comms[1]);
  MPI_Comm_free(&comms[2]);
  MPI_Finalize();
  return all_errors != 0;
}
