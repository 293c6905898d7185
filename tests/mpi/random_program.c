/* A random valid MPI program (replay fuzzing, issue 12): usage
 *   random_program SEED [STEPS]
 * Every rank draws the same plan from SEED (splitmix64), step by step, and
 * carries out its own part.  The steps, each with random sleeps (0-15 ms)
 * before the calls:
 *   blocking     1-4 messages: MPI_Send/Ssend/Bsend or MPI_Sendrecv pairs;
 *                receives by source, MPI_ANY_SOURCE (with the message's own
 *                tag) or MPI_ANY_TAG (by source), some after MPI_Probe or an
 *                MPI_Iprobe poll;
 *   nonblocking  1-6 messages: Isend/Issend/Irecv (wildcards as above),
 *                completed by Waitall, a Waitany or Waitsome loop, a Testall
 *                poll, or single Waits in reverse order;
 *   collective   on MPI_COMM_WORLD, a duplicate of it, or the groups of two
 *                random splits (all groups, or one group while the others go
 *                on): Barrier, Allreduce, Bcast, Reduce, Allgather, Alltoall,
 *                Gather, Scatter, Scan, Ibarrier, Iallreduce, Ibcast;
 *   burst        100-400 iterations of an 8-byte Isend/Irecv/Waitall ring
 *                without sleeps (events enough for requested cuts), one rank
 *                sleeping 2 ms every 50 iterations;
 *   compute      one rank sleeps 10-40 ms.
 * Why it cannot deadlock: every rank carries out the steps, and within a
 * blocking step the messages, in plan order.  Take the first operation in
 * that order not yet complete: everything before it is complete, so every
 * rank it involves has it as its next operation (a nonblocking step posts
 * all of its operations before it waits), and it completes.  Wildcard
 * receives match only their own message: MPI_ANY_SOURCE receives carry a tag
 * no other message of the run has; MPI_ANY_TAG receives name the source,
 * whose earlier messages to this rank are already received (MPI does not
 * overtake).
 * Every payload is a function of the plan; receivers check it.  The output
 * (errors, a checksum of collective results) does not depend on timing:
 * the test compares it with the program built without onlinews. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

static uint64_t rng_state;
static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int pick(int n) { return (int)(next_u64() % (uint64_t)n); }
static double sleep_draw(void) { return pick(4) == 0 ? 0.0 : 0.001 * pick(16); }

enum { kMaxRanks = 64, kMaxMsgs = 6, kComms = 4, kPayload = 4 };
static int me, np, errors;
static int next_tag = 1;  /* unique per wildcard-capable message; bursts use tag 0 */
static double checksum;
static MPI_Comm comms[kComms]; /* world, its duplicate, split A, split B */
static int colors[kComms][kMaxRanks];

typedef struct {
  int src, dst, tag, recv_mode, send_mode;
  double sleep_src, sleep_dst;
} Msg;

static void fill(int* buf, int tag) {
  for (int i = 0; i < kPayload; ++i) buf[i] = tag * 7 + i;
}
static void check(const int* buf, int tag, const MPI_Status* st, int src) {
  for (int i = 0; i < kPayload; ++i) errors += buf[i] != tag * 7 + i;
  errors += st->MPI_SOURCE != src || st->MPI_TAG != tag;
}
/* recv_mode 0: by source and tag, 1: MPI_ANY_SOURCE, 2: MPI_ANY_TAG. */
static int want_src(const Msg* m) { return m->recv_mode == 1 ? MPI_ANY_SOURCE : m->src; }
static int want_tag(const Msg* m) { return m->recv_mode == 2 ? MPI_ANY_TAG : m->tag; }

static int draw_msgs(Msg* msgs, int max) {
  int k = 1 + pick(max);
  for (int i = 0; i < k; ++i) {
    Msg* m = &msgs[i];
    m->src = pick(np);
    m->dst = (m->src + 1 + pick(np - 1)) % np;
    m->tag = next_tag++;
    m->recv_mode = pick(3);
    m->send_mode = pick(4);
    m->sleep_src = sleep_draw();
    m->sleep_dst = sleep_draw();
  }
  return k;
}

static void blocking_step(void) {
  Msg msgs[kMaxMsgs];
  int k = draw_msgs(msgs, 4);
  for (int i = 0; i < k; ++i) {
    const Msg* m = &msgs[i];
    int out[kPayload], in[kPayload];
    MPI_Status st;
    fill(out, m->tag);
    if (m->send_mode == 3) {  /* a pair exchange with MPI_Sendrecv, both ways */
      if (me == m->src || me == m->dst) {
        int peer = me == m->src ? m->dst : m->src;
        sleep_s(me == m->src ? m->sleep_src : m->sleep_dst);
        MPI_Sendrecv(out, kPayload, MPI_INT, peer, m->tag, in, kPayload, MPI_INT, peer, m->tag, MPI_COMM_WORLD, &st);
        check(in, m->tag, &st, peer);
      }
      continue;
    }
    if (me == m->src) {
      sleep_s(m->sleep_src);
      if (m->send_mode == 0) MPI_Send(out, kPayload, MPI_INT, m->dst, m->tag, MPI_COMM_WORLD);
      if (m->send_mode == 1) MPI_Ssend(out, kPayload, MPI_INT, m->dst, m->tag, MPI_COMM_WORLD);
      if (m->send_mode == 2) MPI_Bsend(out, kPayload, MPI_INT, m->dst, m->tag, MPI_COMM_WORLD);
    } else if (me == m->dst) {
      sleep_s(m->sleep_dst);
      int how = m->tag % 3; /* 0: receive, 1: MPI_Probe first, 2: MPI_Iprobe poll first */
      if (how == 1) MPI_Probe(want_src(m), want_tag(m), MPI_COMM_WORLD, &st);
      if (how == 2) {
        int flag = 0;
        for (;;) {
          MPI_Iprobe(want_src(m), want_tag(m), MPI_COMM_WORLD, &flag, &st);
          if (flag) break;
          sleep_s(0.001);
        }
      }
      if (how == 0) {
        MPI_Recv(in, kPayload, MPI_INT, want_src(m), want_tag(m), MPI_COMM_WORLD, &st);
      } else {
        errors += st.MPI_SOURCE != m->src || st.MPI_TAG != m->tag;
        MPI_Recv(in, kPayload, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
      }
      check(in, m->tag, &st, m->src);
    }
  }
}

static void nonblocking_step(void) {
  Msg msgs[kMaxMsgs];
  int k = draw_msgs(msgs, kMaxMsgs), how = pick(5), n = 0;
  MPI_Request reqs[kMaxMsgs];
  int bufs[kMaxMsgs][kPayload], is_recv[kMaxMsgs], idx[kMaxMsgs];
  for (int i = 0; i < k; ++i) {
    const Msg* m = &msgs[i];
    if (me == m->dst) {
      sleep_s(m->sleep_dst * 0.5);
      MPI_Irecv(bufs[n], kPayload, MPI_INT, want_src(m), want_tag(m), MPI_COMM_WORLD, &reqs[n]);
      is_recv[n] = 1;
      idx[n++] = i;
    } else if (me == m->src) {
      sleep_s(m->sleep_src);
      fill(bufs[n], m->tag);
      if (m->send_mode % 2 == 0) MPI_Isend(bufs[n], kPayload, MPI_INT, m->dst, m->tag, MPI_COMM_WORLD, &reqs[n]);
      else MPI_Issend(bufs[n], kPayload, MPI_INT, m->dst, m->tag, MPI_COMM_WORLD, &reqs[n]);
      is_recv[n] = 0;
      idx[n++] = i;
    }
  }
  MPI_Status st[kMaxMsgs];
  if (how == 0 || n == 0) {
    MPI_Waitall(n, reqs, st);
  } else if (how == 1) {
    for (int left = n; left > 0; --left) {
      int j;
      MPI_Status s;
      MPI_Waitany(n, reqs, &j, &s);
      st[j] = s;
    }
  } else if (how == 2) {
    for (int left = n; left > 0;) {
      int out, which[kMaxMsgs];
      MPI_Status s[kMaxMsgs];
      MPI_Waitsome(n, reqs, &out, which, s);
      for (int j = 0; j < out; ++j) st[which[j]] = s[j];
      left -= out;
    }
  } else if (how == 3) {
    for (int flag = 0; !flag;) {
      MPI_Testall(n, reqs, &flag, st);
      if (!flag) sleep_s(0.001);
    }
  } else {
    for (int j = n - 1; j >= 0; --j) MPI_Wait(&reqs[j], &st[j]);
  }
  for (int j = 0; j < n; ++j) {
    if (is_recv[j]) check(bufs[j], msgs[idx[j]].tag, &st[j], msgs[idx[j]].src);
  }
}

static void collective_step(void) {
  int c = pick(kComms), op = pick(12), only = pick(3) == 0 ? pick(3) : -1, root_pick = pick(kMaxRanks);
  double sl[kMaxRanks];
  for (int r = 0; r < np; ++r) sl[r] = sleep_draw();
  if (c >= 2 && only >= 0 && colors[c][me] != only % 3) return; /* one group only (maybe none) */
  MPI_Comm comm = comms[c];
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int root = root_pick % size;
  sleep_s(sl[me]);
  double v = (double)(me + 1), r = 0.0;
  double all[kMaxRanks], mine[kMaxRanks];
  for (int i = 0; i < size; ++i) mine[i] = v * (i + 1);
  MPI_Request req;
  switch (op) {
    case 0: MPI_Barrier(comm); break;
    case 1: MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm); break;
    case 2: r = v; MPI_Bcast(&r, 1, MPI_DOUBLE, root, comm); break;
    case 3: MPI_Reduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, root, comm); break;
    case 4: MPI_Allgather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm); r = all[size - 1]; break;
    case 5: MPI_Alltoall(mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm); r = all[0]; break;
    case 6: MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, root, comm); r = rank == root ? all[0] : 0; break;
    case 7: MPI_Scatter(mine, 1, MPI_DOUBLE, &r, 1, MPI_DOUBLE, root, comm); break;
    case 8: MPI_Scan(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm); break;
    case 9: MPI_Ibarrier(comm, &req); sleep_s(sl[me] * 0.5); MPI_Wait(&req, MPI_STATUS_IGNORE); break;
    case 10:
      MPI_Iallreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
    default:
      r = v;
      MPI_Ibcast(&r, 1, MPI_DOUBLE, root, comm, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      break;
  }
  checksum += r;
}

static void burst_step(void) {
  int iters = 100 + pick(301), stride = 1 + pick(np - 1), sleeper = pick(np);
  int right = (me + stride) % np, left = (me - stride + np) % np;
  for (int i = 0; i < iters; ++i) {
    double out = (double)(me * 1000 + i), in = -1.0;
    MPI_Request rq[2];
    if (i % 50 == 0 && me == sleeper) sleep_s(0.002);
    MPI_Irecv(&in, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&out, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    errors += in != (double)(left * 1000 + i);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  me = world_rank();
  np = world_size();
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  int steps = argc > 2 ? atoi(argv[2]) : 40;
  if (np < 2 || np > kMaxRanks) {
    if (me == 0) fprintf(stderr, "random_program: 2 to %d ranks\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rng_state = seed * 0x2545F4914F6CDD1Dull + 1;
  static char bsend_buffer[1 << 16];
  MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
  comms[0] = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  for (int c = 2; c < kComms; ++c) {
    for (int r = 0; r < np; ++r) colors[c][r] = pick(c); /* split A: 2 colors, split B: 3 */
    MPI_Comm_split(MPI_COMM_WORLD, colors[c][me], np - me, &comms[c]);
  }
  int counts[5] = {0, 0, 0, 0, 0};
  for (int s = 0; s < steps; ++s) {
    int kind = pick(10); /* weights 3 3 2 1 1 */
    int k = kind < 3 ? 0 : kind < 6 ? 1 : kind < 8 ? 2 : kind < 9 ? 3 : 4;
    counts[k]++;
    if (k == 0) blocking_step();
    if (k == 1) nonblocking_step();
    if (k == 2) collective_step();
    if (k == 3) burst_step();
    if (k == 4) {
      int who = pick(np);
      double t = 0.010 + 0.001 * pick(31);
      if (me == who) sleep_s(t);
    }
  }
  int total_errors = 0;
  double total = 0.0;
  MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  void* detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  for (int c = 1; c < kComms; ++c) MPI_Comm_free(&comms[c]);
  if (me == 0) {
    printf("steps: %d blocking, %d nonblocking, %d collective, %d burst, %d compute\n", counts[0], counts[1],
           counts[2], counts[3], counts[4]);
    printf("errors: %d\nchecksum: %.6f\n", total_errors, total);
  }
  MPI_Finalize();
  return total_errors == 0 ? 0 : 1;
}
