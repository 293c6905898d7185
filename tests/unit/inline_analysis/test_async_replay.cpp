// The asynchronous replay (DESIGN.md §4): every transport operation suspends
// until the other ranks did their part, and the driver resumes ranks in any
// order.  With LocalWorld's scramble option every step completes a random
// number of ticks late and local work is cut into random slices, so steps of
// different ranks -- also of a rank an epoch ahead of another -- complete
// in every order.  The results must not depend on that order.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Four epochs of three ranks with everything the replay exchanges: blocking
// and nonblocking messages (one crossing a cut), a probe, Late Sender and
// Late Receiver waits, a barrier, a broadcast and a reduce, and a scan on a
// sub-communicator of ranks 1 and 2.
std::vector<VRank> program() {
  auto r = make_ranks(3);
  const std::uint16_t sub1 = r[1].add_comm(77, {1, 2}), sub2 = r[2].add_comm(77, {1, 2});
  double t = 0.0;
  for (int it = 0; it < 4; ++it) {
    r[0].region(t, t + 1.0, kWork);
    r[0].send(t + 1.0, t + 1.1, 1, it);                     // r1 waits 0.8 (Late Sender)
    r[1].recv(t + 0.2, t + 1.2, 0, it);
    r[1].send(t + 1.2, t + 1.7, 2, 9, 1 << 20, rt::kRegion_MPI_Send,
              evflag::kSynchronous);                           // r2 posts at +1.65: Late Receiver 0.45
    r[2].region(t, t + 1.6, kSolve);
    r[2].probe(t + 1.6, t + 1.65, 1, 9);
    r[2].recv(t + 1.65, t + 1.7, 1, 9);
    r[2].isend(t + 1.7, t + 1.71, 0, 5, 8, 100 + static_cast<std::uint32_t>(it));
    r[0].irecv(t + 1.1, t + 1.15, 2, 5, 200 + static_cast<std::uint32_t>(it));
    r[0].complete(t + 1.15, t + 1.75, rt::kRegion_MPI_Wait, {{200 + static_cast<std::uint32_t>(it), true, 2, 5}});
    r[2].complete(t + 1.71, t + 1.72, rt::kRegion_MPI_Wait, {{100 + static_cast<std::uint32_t>(it), false}});
    r[1].coll(t + 1.7, t + 1.9, rt::kRegion_MPI_Scan, -1, 8, 8, sub1);
    r[2].coll(t + 1.72, t + 1.9, rt::kRegion_MPI_Scan, -1, 8, 8, sub2);
    r[0].coll(t + 1.75, t + 2.1, rt::kRegion_MPI_Bcast, 0, 8, 8);
    r[1].coll(t + 1.9, t + 2.1, rt::kRegion_MPI_Bcast, 0, 0, 8);
    r[2].coll(t + 1.95, t + 2.1, rt::kRegion_MPI_Bcast, 0, 0, 8);
    r[0].coll(t + 2.1, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 2.3, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(t + 2.4, t + 2.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (it == 1) {  // a message that crosses the next cut
      r[0].isend(t + 2.5, t + 2.6, 1, 42, 8, 300);
      r[0].complete(t + 2.6, t + 2.7, rt::kRegion_MPI_Wait, {{300, false}});
    }
    if (it == 2) r[1].recv(t + 2.5, t + 2.6, 0, 42);
    r[0].coll(t + 2.7, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 0);
    r[1].coll(t + 2.7, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 0);
    r[2].coll(t + 2.6, t + 2.9, rt::kRegion_MPI_Reduce, 2, 8, 24);
    r[0].coll(t + 2.9, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 2.9, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(t + 2.95, t + 3.0, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (it < 3) {
      for (auto& v : r) v.cut();
    }
    t += 3.0;
  }
  for (auto& v : r) v.leave(t);
  return r;
}

// Every metric of every call path of every rank.
std::vector<double> everything(const std::vector<RankResult>& res) {
  std::vector<double> v;
  for (const auto& r : res) {
    const auto& cps = r.analyzer->callpaths();
    for (std::uint32_t cp = 0; cp < cps.size(); ++cp) {
      for (int m = 0; m < analysis::kMetricCount; ++m) {
        v.push_back(r.analyzer->profile().run_value(0, cp, static_cast<Metric>(m)));
      }
    }
  }
  return v;
}

// `make`'s program replayed with steps completing in `seeds` scrambled
// orders gives every value of `base` (its replay in order).
template <class Make>
void same_when_scrambled(Make make, const std::vector<RankResult>& base, std::uint64_t seeds) {
  const auto expected = everything(base);
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    CAPTURE(seed);
    auto ranks = make();
    const auto res = replay(ranks, {"all"}, {seed, true});
    const auto got = everything(res);
    REQUIRE(got.size() == expected.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] == Approx(expected[i]).margin(1e-12) ? 0 : 1;
    CHECK(differ == 0);
  }
}

}  // namespace

TEST_CASE("results do not depend on the order in which steps complete", "[async]") {
  auto base_ranks = program();
  const auto base = replay(base_ranks);
  // The program exercises what it should (so the comparison means something).
  CHECK(base[1].get(Metric::mpi_latesender) == Approx(4 * 0.8));
  CHECK(base[1].get(Metric::mpi_latereceiver) == Approx(4 * 0.45));
  CHECK(base[0].get(Metric::delay_latesender) > 0.0);   // rank 0's work delayed rank 1
  CHECK(base[2].get(Metric::delay_latereceiver) > 0.0);  // rank 2's late receive delayed rank 1
  CHECK(base[0].get(Metric::critical_path) > 0.0);
  CHECK(base[1].facts[2].cross_epoch_messages == 1);
  same_when_scrambled(program, base, 25);
}

TEST_CASE("the in-process driver reports a deadlock instead of hanging", "[async]") {
  analysis::LocalWorld world(2, {3, true});
  // Rank 1 waits for a message that rank 0 never posts.
  CHECK_THROWS_WITH(world.run([](int r, analysis::Transport& t) -> analysis::Task<> {
                      if (r == 1) co_await t.take_any();
                    }),
                    Catch::Contains("deadlock"));
}

namespace {

// A master (rank 0) and three workers, `tasks` tasks, one window.  Worker w
// computes each task for 1.5 + 0.05 w (kWork), sends the result; the master
// takes results in the order they come and answers each with the next task
// 2 ms later, so the worker waits 1 ms for it (it posted its receive 1 ms
// after its send).  The master waits for every result it takes before the
// result is sent.
struct Farm {
  double master_wait, worker_wait;  // Late Sender, as built
  double end;                       // the closing barrier's end
};
Farm farm(std::vector<VRank>& r, int tasks) {
  r = make_ranks(4);
  constexpr int kTask = 1, kResult = 2, kStop = 3;
  double m = 0.0, master_wait = 0.0, worker_wait = 0.0;
  std::vector<double> done(4, 0.0);
  int sent = 0;
  for (int w = 1; w <= 3; ++w, ++sent) {  // first tasks: worker w waits m - 0
    r[0].send(m, m + 0.001, w, kTask);
    r[static_cast<std::size_t>(w)].recv(0.0, m + 0.002, 0, kTask);
    worker_wait += m;
    r[static_cast<std::size_t>(w)].region(m + 0.002, m + 0.002 + 1.5 + 0.05 * w, kWork);
    done[static_cast<std::size_t>(w)] = m + 0.002 + 1.5 + 0.05 * w;
    r[static_cast<std::size_t>(w)].send(done[static_cast<std::size_t>(w)], done[static_cast<std::size_t>(w)] + 0.001, 0,
                                        kResult);
    m += 0.001;
  }
  for (int got = 0; got < tasks; ++got) {
    int w = 1;
    for (int v = 2; v <= 3; ++v) w = done[static_cast<std::size_t>(v)] < done[static_cast<std::size_t>(w)] ? v : w;
    const double d = done[static_cast<std::size_t>(w)], before = m;
    master_wait += std::max(d - before, 0.0);
    m = std::max(before, d) + 0.002;
    r[0].recv(before, m, w, kResult);
    auto& wr = r[static_cast<std::size_t>(w)];
    if (sent < tasks) {
      r[0].send(m, m + 0.001, w, kTask);
      wr.recv(d + 0.001, m + 0.002, 0, kTask);
      worker_wait += m - (d + 0.001);
      wr.region(m + 0.002, m + 0.002 + 1.5 + 0.05 * w, kWork);
      done[static_cast<std::size_t>(w)] = m + 0.002 + 1.5 + 0.05 * w;
      wr.send(done[static_cast<std::size_t>(w)], done[static_cast<std::size_t>(w)] + 0.001, 0, kResult);
      m += 0.001;
      ++sent;
    } else {
      done[static_cast<std::size_t>(w)] = 1e30;
      r[0].send(m, m + 0.001, w, kStop);
      wr.recv(d + 0.001, m + 0.002, 0, kStop);
      worker_wait += m - (d + 0.001);
      m += 0.001;
    }
  }
  // A closing barrier: the master enters it last, so nobody else waits in
  // it longer than ... the master's last sends (it ends the path there).
  r[0].coll(m, m + 0.01, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (int w = 1; w <= 3; ++w) {
    const double last = r[static_cast<std::size_t>(w)].events.back().time * 1e-9;
    r[static_cast<std::size_t>(w)].coll(last, m + 0.01, rt::kRegion_MPI_Barrier, -1, 0, 0);
  }
  for (auto& v : r) v.leave(m + 0.02);
  return {master_wait, worker_wait, m + 0.01};
}

}  // namespace

namespace {
// A loop of barriers on 4 ranks: in iteration i rank j works 10 (1 + (i + j)
// mod 4) ms, so each barrier waits for a different rank and every other
// rank waits there.  Returns the waiting and the loop's end.
std::pair<double, double> barrier_loop(std::vector<VRank>& r, int iterations) {
  r = make_ranks(4);
  double t = 0.0, waits = 0.0;
  for (int i = 0; i < iterations; ++i) {
    double longest = 0.0;
    for (int j = 0; j < 4; ++j) longest = std::max(longest, 0.01 * (1 + (i + j) % 4));
    for (int j = 0; j < 4; ++j) {
      const double work = 0.01 * (1 + (i + j) % 4);
      r[static_cast<std::size_t>(j)].region(t, t + work, kWork);
      r[static_cast<std::size_t>(j)].coll(t + work, t + longest + 0.001, rt::kRegion_MPI_Barrier, -1, 0, 0);
      waits += longest - work;
    }
    t += longest + 0.001;
  }
  for (auto& v : r) v.leave(t + 0.001);
  return {waits, t};
}
}  // namespace

TEST_CASE("the backward replay of a barrier loop takes few rounds per instance", "[async]") {
  // Each member that waited at a barrier is a pair with the last to enter,
  // replayed through the mail with the rest (sync_replay.hpp).  As a step
  // of the walk (a broadcast and a reduction that every member reached in
  // walk order) each instance took 8 ticks of the in-process world (267
  // for 30 barriers, 2395 for 300); as pairs about 2 (107 and 711).  Not a
  // constant: what a member hands on depends on the rank that last held the
  // path, which rotates, so values wait for each other along the loop.
  std::uint64_t ticks_small = 0, ticks_large = 0;
  std::vector<VRank> r;
  barrier_loop(r, 30);
  replay(r, {"all"}, {1, false}, &ticks_small);
  const auto [waits, end] = barrier_loop(r, 300);
  auto large = replay(r, {"all"}, {1, false}, &ticks_large);
  CAPTURE(ticks_small, ticks_large);
  CHECK(ticks_large - ticks_small < 3 * 270);
  // Every barrier wait is explained by the last rank's extra work, and the
  // path runs through the longest work of every iteration.
  double waited = 0, delay = 0, path = 0, path_work = 0;
  for (auto& x : large) {
    waited += x.get(Metric::mpi_barrier_wait);
    delay += x.get(Metric::delay_barrier);
    path += x.get(Metric::critical_path);
    path_work += x.get(Metric::critical_path, kWork);
  }
  CHECK(waited == Approx(waits));
  CHECK(delay == Approx(waits).epsilon(1e-9));
  CHECK(path == Approx(end).epsilon(1e-9));  // (it ends at the last barrier's first leave)
  CHECK(path_work == Approx(300 * 0.04).epsilon(1e-9));
}

TEST_CASE("the backward replay of a master-worker farm takes a constant number of rounds", "[async]") {
  // Every task makes the master wait for a worker and the worker (1 ms) for
  // the master, and what each side sends at a wait depends on what it
  // learned at its later points (the critical path alternates between
  // them): walked point by point, the replay was a chain of round trips as
  // long as the farm, each waiting for the worker's next resumption.  Now
  // each side sends what it cannot know yet in terms of the other's values
  // (sym.hpp), and the rounds do not grow with the tasks.
  std::uint64_t ticks_small = 0, ticks_large = 0;
  std::vector<VRank> r;
  const Farm f30 = farm(r, 30);
  auto small = replay(r, {"all"}, {1, false}, &ticks_small);
  CHECK(small[0].get(Metric::mpi_latesender) == Approx(f30.master_wait));
  const Farm f = farm(r, 300);
  auto large = replay(r, {"all"}, {1, false}, &ticks_large);
  CAPTURE(ticks_small, ticks_large);
  CHECK(ticks_large < ticks_small + 40);

  // The results: the master's waiting and the workers', all of the
  // master's waiting charged to the workers (to their tasks but for the
  // microseconds of MPI_Recv the master's intervals lack), every wait
  // explained (delay costs sum to the waiting, the closing barrier's
  // included), and the critical path spans the window, through the tasks.
  double workers = 0, on_workers = 0, on_tasks = 0, delay = 0, waits = 0, path = 0, path_tasks = 0;
  for (int w = 1; w <= 3; ++w) {
    workers += large[static_cast<std::size_t>(w)].get(Metric::mpi_latesender);
    on_workers += large[static_cast<std::size_t>(w)].get(Metric::delay_latesender);
    on_tasks += large[static_cast<std::size_t>(w)].get(Metric::delay_latesender, kWork);
  }
  for (auto& x : large) {
    delay += x.get(Metric::delay);
    waits += x.get(Metric::mpi_latesender) + x.get(Metric::mpi_barrier_wait);
    path += x.get(Metric::critical_path);
    path_tasks += x.get(Metric::critical_path, kWork);
  }
  CHECK(large[0].get(Metric::mpi_latesender) == Approx(f.master_wait));
  CHECK(workers == Approx(f.worker_wait));
  CHECK(on_workers == Approx(f.master_wait).epsilon(1e-9));
  CHECK(on_tasks == Approx(f.master_wait).epsilon(1e-4));
  CHECK(delay == Approx(waits).epsilon(1e-9));
  CHECK(path == Approx(f.end).epsilon(1e-9));
  CHECK(path_tasks > 0.95 * f.end);

  // The same in every order of completion.
  farm(r, 60);
  const auto base = everything(replay(r));
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    farm(r, 60);
    const auto got = everything(replay(r, {"all"}, {seed, true}));
    REQUIRE(got.size() == base.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] == Approx(base[i]).margin(1e-12) ? 0 : 1;
    CHECK(differ == 0);
  }
}

TEST_CASE("a message received before a broadcast and sent after it does not stall the replay", "[async]") {
  // Rank 1 waits in a broadcast for the root (rank 0: enters at 1.0 after
  // 1 s of work), then sends to rank 2, which had waited 0.53 s for it in
  // MPI_Recv before entering the same broadcast (a broadcast does not
  // synchronize: rank 2 enters after rank 1 left).  Backwards, rank 1 needs
  // rank 2's value for its send before it can take part in the broadcast's
  // step, and rank 2 reaches its receive only after the broadcast: a walk
  // that takes every collective step in turn waits in a cycle (it did, and
  // LocalWorld reports it).  Rank 2 did not wait in the broadcast, so it
  // takes its part later.
  auto r = make_ranks(3);
  r[0].region(0.0, 1.0, kWork);
  r[0].coll(1.0, 1.01, rt::kRegion_MPI_Bcast, 0, 8, 8);
  r[1].coll(0.1, 1.02, rt::kRegion_MPI_Bcast, 0, 0, 8);
  r[1].send(1.03, 1.04, 2, 5);
  r[2].recv(0.5, 1.05, 1, 5);
  r[2].coll(1.06, 1.07, rt::kRegion_MPI_Bcast, 0, 0, 8);
  for (auto& v : r) v.coll(1.5, 1.6, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(2.0);
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    auto res = replay(r, {"all"}, {seed, seed > 1});
    CHECK(res[2].get(Metric::mpi_latesender) == Approx(0.53));
    CHECK(res[1].get(Metric::mpi_latebroadcast) == Approx(0.9));
    // Delay costs: the broadcast's wait lies in the root's work (its
    // interval since the start is 1 s of work, rank 1's 0.1 s of nothing
    // else: 0.9 / 1.0 of it); rank 2's wait in rank 1's interval since the
    // broadcast (the broadcast's rest, 1.0-1.02 s, and 0.01 s in main),
    // compared with rank 2's since the window start (0.5 s in main): only
    // the 0.02 s in MPI_Bcast exceed it.  The path spans the window up to
    // the closing barrier's end.
    double delay = 0, path = 0;
    for (auto& x : res) {
      delay += x.get(Metric::delay);
      path += x.get(Metric::critical_path);
    }
    CHECK(res[0].get(Metric::delay, kWork) == Approx(0.9));
    CHECK(res[1].get(Metric::delay_latesender, rt::kRegion_MPI_Bcast) == Approx(0.02));
    CHECK(delay == Approx(0.92));
    CHECK(path == Approx(1.6));
  }
}

TEST_CASE("a message against a scan's pairs does not stall the backward replay", "[async]") {
  // Rank 0 works 1 s and enters the scan last below rank 1, which waits
  // there 1 s and then sends rank 2 a message that rank 2 waits 1 s for
  // before it enters the scan.  When every member of a scan waited in the
  // replay for its open values before a collective step, rank 1 waited for
  // rank 2's value of the receive, and rank 2 for rank 1 in the step: the
  // driver reported a deadlock.  A scan wait is a pair now (ScanWait /
  // ScanCause), replayed like a message.
  for (std::uint64_t seed = 0; seed <= 10; ++seed) {
    CAPTURE(seed);
    auto r = make_ranks(3);
    r[0].region(0.0, 1.0, kWork);
    r[0].coll(1.0, 1.1, rt::kRegion_MPI_Scan, -1, 8, 8);
    r[1].coll(0.0, 1.1, rt::kRegion_MPI_Scan, -1, 8, 8);  // waits 1.0 for rank 0
    r[1].send(1.1, 1.2, 2, 7);
    r[2].recv(0.0, 1.2, 1, 7);                             // waits 1.1 for rank 1's send
    r[2].coll(1.2, 1.3, rt::kRegion_MPI_Scan, -1, 8, 8);   // entered last: no wait
    r[0].coll(1.1, 1.4, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(1.2, 1.4, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(1.3, 1.4, rt::kRegion_MPI_Barrier, -1, 0, 0);  // last: the path ends on rank 2
    for (auto& v : r) v.leave(1.5);
    const auto res = seed == 0 ? replay(r) : replay(r, {"all"}, {seed, true});
    CHECK(res[1].get(Metric::mpi_earlyscan) == Approx(1.0));
    CHECK(res[2].get(Metric::mpi_latesender) == Approx(1.1));
    CHECK(res[2].get(Metric::mpi_earlyscan) == Approx(0.0));
    // The path (waits end when the cause entered): rank 2 from the barrier
    // back to its receive's wait end [1.1, 1.4], rank 1 from its send back
    // to its scan wait's end [1.0, 1.1], rank 0 from its scan back to the
    // start [0, 1.0].
    CHECK(res[0].get(Metric::critical_path) == Approx(1.0).margin(1e-6));
    CHECK(res[1].get(Metric::critical_path) == Approx(0.1).margin(1e-6));
    CHECK(res[2].get(Metric::critical_path) == Approx(0.3).margin(1e-6));
    // A scan wait has no delay metric (as in Scalasca): rank 0, which only
    // caused rank 1's scan wait, is charged nothing, short- or long-term.
    CHECK(res[0].get(Metric::delay) == Approx(0.0));
  }
}

TEST_CASE("scan pairs on two communicators stay apart", "[async]") {
  // Rank 1 waits for rank 0 in the first scan on WORLD (gid 1) and in the
  // first on another communicator whose gid, (3 << 32) | 2, folded to 32
  // bits as a first version of the scan pairs did, equals WORLD's: the two
  // waits then had one mail key and the replay waited forever for the
  // second fixed part.  Pairs are named by the full gid.
  for (std::uint64_t seed = 0; seed <= 5; ++seed) {
    CAPTURE(seed);
    auto r = make_ranks(2);
    const std::uint64_t gid = (3ull << 32) | 2;
    const std::uint16_t b0 = r[0].add_comm(gid, {0, 1}), b1 = r[1].add_comm(gid, {0, 1});
    r[0].region(0.0, 1.0, kWork);
    r[0].coll(1.0, 1.1, rt::kRegion_MPI_Scan, -1, 8, 8);
    r[0].region(1.1, 2.0, kWork);
    r[0].coll(2.0, 2.1, rt::kRegion_MPI_Scan, -1, 8, 8, b0);
    r[0].coll(2.1, 2.2, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(0.0, 1.1, rt::kRegion_MPI_Scan, -1, 8, 8);      // waits 1.0
    r[1].region(1.1, 1.2, kSolve);
    r[1].coll(1.2, 2.1, rt::kRegion_MPI_Scan, -1, 8, 8, b1);  // waits 0.8
    r[1].coll(2.15, 2.2, rt::kRegion_MPI_Barrier, -1, 0, 0);  // last: the path ends on rank 1
    for (auto& v : r) v.leave(2.3);
    const auto res = seed == 0 ? replay(r) : replay(r, {"all"}, {seed, true});
    CHECK(res[1].get(Metric::mpi_earlyscan) == Approx(1.8));
    // Rank 1 holds the path back to its second scan's wait end (2.0), rank 0
    // from there back to the start (it waited nowhere).
    CHECK(res[0].get(Metric::critical_path) == Approx(2.0).margin(1e-6));
    CHECK(res[1].get(Metric::critical_path) == Approx(0.2).margin(1e-6));
  }
}

namespace {

// A wavefront of four ranks, six blocks, one window: rank r > 0 receives
// each block from r - 1, works 1 s on it and sends it on (each call 0.01
// s, a message arrives 0.01 s after its send began); rank 0 works 2 s per
// block.  So every receive waits (Late Sender): rank 1 2.0 s for the first
// block (rank 0 sends at 2.0), then 0.99 s per block (rank 0 sends every
// 2.01 s, rank 1 is free 1.02 s after a block arrives); rank 2 3.01 s,
// then 0.99; rank 3 4.02 s, then 1.0 (it sends nothing).  The waits of
// ranks 2 and 3 propagate rank 1's: their long-term costs travel back up
// the pipeline, and every rank holds the values of its waits until those
// from downstream have arrived (ReplayMail's held values).  Rank 0's extra
// work explains all of the waiting.
std::vector<VRank> wavefront() {
  auto r = make_ranks(4);
  std::vector<double> free_at(4, 0.0), sent(4, 0.0);
  for (int b = 0; b < 6; ++b) {
    for (int k = 0; k < 4; ++k) {
      double t = free_at[static_cast<std::size_t>(k)];
      if (k > 0) {
        const double arrive = sent[static_cast<std::size_t>(k) - 1] + 0.01;
        r[static_cast<std::size_t>(k)].recv(t, arrive, k - 1, b);
        t = arrive;
      }
      const double work = k == 0 ? 2.0 : 1.0;
      r[static_cast<std::size_t>(k)].region(t, t + work, kWork);
      t += work;
      if (k < 3) {
        r[static_cast<std::size_t>(k)].send(t, t + 0.01, k + 1, b);
        sent[static_cast<std::size_t>(k)] = t;
        t += 0.01;
      }
      free_at[static_cast<std::size_t>(k)] = t;
    }
  }
  double end = 0;
  for (double f : free_at) end = std::max(end, f);
  for (auto& v : r) v.leave(end);
  return r;
}

}  // namespace

TEST_CASE("a wavefront's held values: the results do not depend on the order values arrive in", "[async]") {
  auto base_ranks = wavefront();
  const auto base = replay(base_ranks);
  CHECK(base[1].get(Metric::mpi_latesender) == Approx(2.0 + 5 * 0.99));
  CHECK(base[2].get(Metric::mpi_latesender) == Approx(3.01 + 5 * 0.99));
  CHECK(base[3].get(Metric::mpi_latesender) == Approx(4.02 + 5 * 1.0));
  // Rank 0's extra work is the cause, directly (rank 1) and through the
  // waits that propagate (ranks 2 and 3).
  CHECK(base[0].get(Metric::delay_latesender) > 0.0);
  CHECK(base[0].get(Metric::delay_latesender_longterm) > 0.0);
  double waits = 0, costs = 0;
  for (const auto& x : base) {
    waits += x.get(Metric::mpi_latesender);
    costs += x.get(Metric::delay_latesender) + x.get(Metric::delay_latesender_longterm);
  }
  CHECK(costs == Approx(waits));
  same_when_scrambled(wavefront, base, 20);
}
