// OpenMP root causes on hand-built streams of a rank's threads: idle
// threads, limited parallelism and their delay costs (omp_idle.cpp), OpenMP
// barrier delay costs (omp_barrier.cpp), and how MPI waits pass them on
// (delay_costs.cpp).
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;
using analysis::OmpGroup;

namespace {

struct Constructs {
  std::uint32_t parallel, task, idle, barrier, wait;
};
// The construct regions the OMPT tool records (ompt/constructs.def).
Constructs constructs(VRank& v) {
  auto add = [&v](const char* name, OmpGroup g) {
    v.defs.regions.push_back({name, analysis::RegionKind::Omp, {}, {}, 0, "", 0, g});
    return static_cast<std::uint32_t>(v.defs.regions.size() - 1);
  };
  const auto parallel = add("!$omp parallel", OmpGroup::Management);
  const auto task = add("!$omp implicit task", OmpGroup::Team);
  const auto idle = add("!$omp idle", OmpGroup::Idle);
  const auto barrier = add("!$omp barrier", OmpGroup::ExplicitBarrier);
  const auto wait = add("!$omp wait", OmpGroup::Wait);
  return {parallel, task, idle, barrier, wait};
}

// Thread 0 of `v` forks a team of `size` at t0 (its implicit task from
// t0 + 0.1, kWork inside), joined at t1; `workers` run their implicit
// tasks over the same span.
void team(VRank& v, const Constructs& c, double t0, double t1, int size, std::initializer_list<int> workers) {
  static std::uint64_t next_id = 100;  // (the fork and the implicit tasks name their team, as recorded)
  const std::uint64_t id = ++next_id;
  v.on(0).enter(t0, c.parallel, 0, id);
  v.enter(t0 + 0.1, c.task, size, id);
  v.region(t0 + 0.1, t1 - 0.1, kWork);
  v.leave(t1 - 0.1);
  v.leave(t1);
  for (int w : workers) {
    v.on(w).enter(t0 + 0.1, c.task, size, id);
    v.region(t0 + 0.1, t1 - 0.1, kWork);
    v.leave(t1 - 0.1);
  }
  v.on(0);
}

// A single-threaded rank that computes kWork from 0 to t and then sends to
// rank 1 (0.01 s), until `end`.
void sender(VRank& v, double t, double end) {
  v.region(0.0, t, kWork);
  v.send(t, t + 0.01, 1);
  v.leave(end);
}

}  // namespace

TEST_CASE("idle threads and limited parallelism at the master's call path", "[omp][idle]") {
  // One rank, 4 threads.  The master computes alone 0-1 (no team yet: no
  // idleness), runs a team of 4 over 1-4, kSolve alone 4-6, a team of 2
  // (itself and thread 1) over 6-8, and kWork alone 8-10.  Threads 2 and 3
  // report idleness (as libomp does) 3.9-6.1; nobody reports the rest.
  auto r = make_ranks(1);
  const auto c = constructs(r[0]);
  r[0].region(0.2, 0.8, kWork);
  team(r[0], c, 1.0, 4.0, 4, {1, 2, 3});
  r[0].region(4.0, 6.0, kSolve);
  team(r[0], c, 6.0, 8.0, 2, {1});
  for (int w : {2, 3}) r[0].on(w).region(3.9, 6.1, c.idle);
  r[0].on(0).region(8.0, 10.0, kWork);
  r[0].leave(10.0);
  for (int w : {1, 2, 3}) r[0].on(w).leave(10.0);
  r[0].on(0);
  const auto res = replay(r);
  const auto& a = res[0];
  // Serial code after the first team (4-6, 8-10): 3 idle threads, 2 s each
  // per stretch, at the master's call paths.
  for (int w : {1, 2, 3}) {
    CHECK(a.get_at(w, Metric::omp_idle_threads, kSolve) == Approx(2.0).margin(1e-9));
    // (Threads 2 and 3 also idle beside the team of 2, whose master ran kWork.)
    CHECK(a.get_at(w, Metric::omp_idle_threads, kWork) == Approx(w == 1 ? 2.0 : 2.0 + 1.8).margin(1e-9));
    // Their own idle region is not charged again.
    CHECK(a.get_at(w, Metric::time, c.idle) == Approx(0.0).margin(1e-12));
  }
  // Beside the team of 2 (its kWork 6.1-7.9 and join 7.9-8: the fork before
  // its size is known is not counted), threads 2 and 3.
  CHECK(a.get_at(1, Metric::omp_limited_parallelism) == Approx(0.0).margin(1e-12));
  for (int w : {2, 3}) {
    CHECK(a.get_at(w, Metric::omp_limited_parallelism) == Approx(1.9).margin(1e-9));
    CHECK(a.get_at(w, Metric::omp_limited_parallelism, kWork) == Approx(1.8).margin(1e-9));
    CHECK(a.get_at(w, Metric::omp_limited_parallelism, c.parallel) == Approx(0.1).margin(1e-9));
    CHECK(a.get_at(w, Metric::omp_idle_threads) == Approx(4.0 + 1.9).margin(1e-9));
  }
  CHECK(a.get_at(0, Metric::omp_idle_threads) == Approx(0.0).margin(1e-12));
  // The master's serial code caused all of it but the limited parallelism:
  // 3 x 2 s on kSolve, 3 x 2 s on kWork after the first team (not before).
  CHECK(a.get_at(0, Metric::delay_ompidle, kSolve) == Approx(6.0).margin(1e-9));
  CHECK(a.get_at(0, Metric::delay_ompidle, kWork) == Approx(6.0).margin(1e-9));
  CHECK(a.get_at(0, Metric::delay_ompidle_longterm) == Approx(0.0).margin(1e-12));
}

TEST_CASE("a nested team's threads keep their own time", "[omp][idle]") {
  // One rank: the master forks a team of 2 (id 1) over 1-4; its worker,
  // thread 1, forks a nested team of 2 (id 2, marked nested as recorded)
  // over 1.5-3.5, whose worker is thread 2 (its implicit task 1.6-3.4).
  // The master computes alone until 6.
  auto r = make_ranks(1);
  const auto c = constructs(r[0]);
  r[0].enter(1.0, c.parallel, 0, 1);
  r[0].enter(1.1, c.task, 2, 1);
  r[0].region(1.2, 3.8, kWork);
  r[0].leave(3.9);
  r[0].leave(4.0);
  r[0].region(4.0, 6.0, kSolve);
  r[0].leave(6.0);
  r[0].on(1).enter(1.1, c.task, 2, 1);
  r[0].enter(1.5, c.parallel, 0, 2, evflag::kNestedTeam);
  r[0].enter(1.6, c.task, 2, 2, evflag::kNestedTeam);
  r[0].leave(3.4);
  r[0].leave(3.5);
  r[0].leave(3.9);
  r[0].leave(6.0);
  r[0].on(2).enter(1.6, c.task, 2, 2, evflag::kNestedTeam);
  r[0].leave(3.4);
  r[0].leave(6.0);
  r[0].on(0);
  const auto res = replay(r);
  // Thread 1, the outer team's worker, idles while the master computes
  // kSolve (4-6); thread 2 is nobody's idle worker: its time outside its
  // nested task (0-1.6, 3.4-6) stays its own.
  CHECK(res[0].get_at(1, Metric::omp_idle_threads, kSolve) == Approx(2.0).margin(1e-9));
  CHECK(res[0].get_at(2, Metric::omp_idle_threads) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get_at(2, Metric::time, kMain) == Approx(1.6 + 2.6).margin(1e-9));
  CHECK(res[0].get_at(2, Metric::time) == Approx(6.0).margin(1e-9));
}

TEST_CASE("an MPI wait of the master in serial code passes the idleness on to its cause", "[omp][idle][delay]") {
  // Rank 0 (one thread): kWork 0-2, then sends to rank 1 at 2.0.  Rank 1:
  // a team of 4 over 0-0.5, then its master receives from 0.5 (Late
  // Sender: 1.5 s) to 2.01 and computes kSolve to 3.0, its 3 workers idle
  // from 0.5 to 3.0: 7.5 s.
  auto r = make_ranks(2);
  const auto c = constructs(r[1]);
  sender(r[0], 2.0, 3.0);
  team(r[1], c, 0.0, 0.5, 4, {1, 2, 3});
  r[1].recv(0.5, 2.01, 0);
  r[1].region(2.01, 3.0, kSolve);
  r[1].leave(3.0);
  for (int w : {1, 2, 3}) r[1].on(w).leave(3.0);
  r[1].on(0);
  const auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(1.5).margin(1e-9));
  double idle = 0;
  for (int w : {1, 2, 3}) idle += res[1].get_at(w, Metric::omp_idle_threads);
  CHECK(idle == Approx(7.5).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::omp_idle_threads, rt::kRegion_MPI_Recv) == Approx(1.51).margin(1e-9));
  // Rank 0's kWork (2 s, against nothing of rank 1's before the receive)
  // explains the wait: 1.5 s of Late Sender, and the 3 x 1.5 s its workers
  // sat idle meanwhile, long-term.
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(1.5).margin(1e-9));
  CHECK(res[0].get(Metric::delay_ompidle_longterm, kWork) == Approx(4.5).margin(1e-9));
  // The master's own serial code caused the rest: the receive's 0.01 s
  // after the message came, and kSolve.
  CHECK(res[1].get(Metric::delay_ompidle, rt::kRegion_MPI_Recv) == Approx(0.03).margin(1e-9));
  CHECK(res[1].get(Metric::delay_ompidle, kSolve) == Approx(2.97).margin(1e-9));
  // The idleness is explained once: short-term plus long-term costs.
  CHECK(res[1].get(Metric::delay_ompidle) + res[0].get(Metric::delay_ompidle_longterm) ==
        Approx(idle).margin(1e-9));
}

TEST_CASE("OpenMP barrier waits are the last thread's costs; its MPI waits pass them on", "[omp][barrier][delay]") {
  // Rank 1, a team of 2 (id 7) over 0-1.6.  Its master receives from rank 0
  // at 0.1 (Late Sender: rank 0 sends at 1.2, 1.1 s), computes kSolve
  // 1.21-1.5 and reaches the barrier last, at 1.5; thread 1 computes kSolve
  // 0-0.2 and waits in the barrier from 0.2 to 1.5 (1.3 s).  Rank 0: kWork
  // 0-1.2, then the send.
  auto r = make_ranks(2);
  const auto c = constructs(r[1]);
  sender(r[0], 1.2, 2.0);
  r[1].enter(0.0, c.parallel, 0, 7);
  r[1].enter(0.0, c.task, 2, 7);
  r[1].recv(0.1, 1.21, 0);
  r[1].region(1.21, 1.5, kSolve);
  r[1].region(1.5, 1.5, c.barrier);
  r[1].leave(1.6);
  r[1].leave(1.6);
  r[1].on(1).enter(0.0, c.task, 2, 7);
  r[1].region(0.0, 0.2, kSolve);
  r[1].enter(0.2, c.barrier);
  r[1].region(0.2, 1.5, c.wait);
  r[1].leave(1.5);
  r[1].leave(1.6);
  r[1].leave(2.0);
  r[1].on(0).leave(2.0);
  const auto res = replay(r);
  REQUIRE(res[1].get_at(1, Metric::omp_ebarrier_wait) == Approx(1.3).margin(1e-9));
  REQUIRE(res[1].get(Metric::mpi_latesender) == Approx(1.1).margin(1e-9));
  // The master's interval before the barrier (0-1.5) against thread 1's:
  // 0.1 s in its implicit task before the receive, 0.01 s of the receive
  // after the message came, 0.29 - 0.2 s more kSolve; and 1.1 s of MPI
  // waiting.  Those explain the 1.3 s exactly.
  CHECK(res[1].get_at(0, Metric::delay_ompbarrier, c.task) == Approx(0.1).margin(1e-9));
  CHECK(res[1].get_at(0, Metric::delay_ompbarrier, rt::kRegion_MPI_Recv) == Approx(0.01).margin(1e-9));
  CHECK(res[1].get_at(0, Metric::delay_ompbarrier, kSolve) == Approx(0.09).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::delay_ompbarrier) == Approx(0.0).margin(1e-12));
  // The receive's wait, 1.1 s, kept thread 1 waiting as long: its cause,
  // rank 0's kWork, is charged that long-term, besides the Late Sender.
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(1.1).margin(1e-9));
  CHECK(res[0].get(Metric::delay_ompbarrier_longterm, kWork) == Approx(1.1).margin(1e-9));
  // Every second of barrier waiting is explained once.
  CHECK(res[1].get(Metric::delay_ompbarrier) + res[0].get(Metric::delay_ompbarrier_longterm) ==
        Approx(1.3).margin(1e-9));
}

TEST_CASE("a taskwait inside a task run in an OpenMP barrier is not the barrier's waiting", "[omp][barrier][delay]") {
  // A team of 2 (id 9) over 0-1.1.  The master computes kSolve 0.1-0.3 and
  // is in the barrier 0.3-1.0: it waits 0.3-0.5, runs a task 0.5-0.8 that
  // waits 0.6-0.8 in a taskwait for its child (run by nobody here), and
  // waits again 0.8-1.0.  Thread 1 computes kWork 0.1-1.0 and arrives last.
  auto r = make_ranks(1);
  auto c = constructs(r[0]);
  auto add = [&r](const char* name, OmpGroup g) {
    r[0].defs.regions.push_back({name, analysis::RegionKind::Omp, {}, {}, 0, "", 0, g});
    return static_cast<std::uint32_t>(r[0].defs.regions.size() - 1);
  };
  const auto task = add("!$omp task", OmpGroup::Work);
  const auto taskwait = add("!$omp taskwait", OmpGroup::Synchronization);
  r[0].enter(0.0, c.parallel, 0, 9);
  r[0].enter(0.1, c.task, 2, 9);
  r[0].region(0.1, 0.3, kSolve);
  r[0].enter(0.3, c.barrier);
  r[0].region(0.3, 0.5, c.wait);
  r[0].enter(0.5, task);
  r[0].region(0.5, 0.6, kWork);
  r[0].enter(0.6, taskwait);
  r[0].region(0.6, 0.8, c.wait);
  r[0].leave(0.8);
  r[0].leave(0.8);
  r[0].region(0.8, 1.0, c.wait);
  r[0].leave(1.0);
  r[0].leave(1.05);
  r[0].leave(1.1);
  r[0].on(1).enter(0.1, c.task, 2, 9);
  r[0].region(0.1, 1.0, kWork);
  r[0].region(1.0, 1.0, c.barrier);
  r[0].leave(1.05);
  r[0].on(0).leave(1.2);
  const auto res = replay(r);
  // The barrier's waiting is 0.4 s (the taskwait's 0.2 s is the task's):
  // the last thread's costs explain that much, no more.
  REQUIRE(res[0].get_at(0, Metric::omp_ebarrier_wait) == Approx(0.4).margin(1e-9));
  CHECK(res[0].get_at(1, Metric::delay_ompbarrier) == Approx(0.4).margin(1e-9));
}

namespace {

// Rank 0, a team of 2 (id 3) over 0-1.1: the master computes kSolve
// 0.1-0.3 and waits at the barrier 0.3-1.0; thread 1 starts its implicit
// task at `worker_start` (idle before, if later than 0.1), computes kWork
// until 1.0 and reaches the barrier last.  Then the master computes kSolve
// alone to 1.5 and enters an MPI_Barrier last (rank 1 computes until 1.4):
// the path ends on rank 0.
std::vector<RankResult> barrier_pass(double worker_start, Constructs& c) {
  auto r = make_ranks(2);
  c = constructs(r[0]);
  r[0].enter(0.0, c.parallel, 0, 3);
  r[0].enter(0.1, c.task, 2, 3);
  r[0].region(0.1, 0.3, kSolve);
  r[0].enter(0.3, c.barrier);
  r[0].region(0.3, 1.0, c.wait);
  r[0].leave(1.0);
  r[0].leave(1.05);
  r[0].leave(1.1);
  r[0].region(1.1, 1.5, kSolve);
  r[0].on(1);
  if (worker_start > 0.1) r[0].region(0.0, worker_start, c.idle);
  r[0].enter(worker_start, c.task, 2, 3);
  r[0].region(worker_start, 1.0, kWork);
  r[0].region(1.0, 1.0, c.barrier);
  r[0].leave(1.05);
  if (worker_start > 0.1) r[0].region(1.05, 1.6, c.idle);
  r[0].leave(1.6);
  r[0].on(0);
  r[1].region(0.0, 1.4, kWork);
  r[1].coll(1.4, 1.6, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[0].coll(1.5, 1.6, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(1.6);
  return replay(r);
}

}  // namespace

TEST_CASE("the critical path runs through the last thread to reach an OpenMP barrier", "[omp][barrier][critical_path]") {
  Constructs c{};
  const auto res = barrier_pass(0.1, c);
  CHECK(res[0].get_at(0, Metric::omp_ebarrier_wait) == Approx(0.7).margin(1e-9));
  CHECK(res[0].get_at(1, Metric::delay_ompbarrier, kWork) == Approx(0.7).margin(1e-9));
  // Over the master's interval before the barrier (0.1-1.0) the path is
  // thread 1's: its kWork, not the master's kSolve or waiting.
  CHECK(res[0].get_at(1, Metric::critical_path, kWork) == Approx(0.9).margin(1e-9));
  CHECK(res[0].get_at(0, Metric::critical_path, c.wait) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get_at(0, Metric::critical_path, kSolve) == Approx(0.4).margin(1e-9));
  // It still tiles the run: 1.6 s.
  CHECK(res[0].get_at(0, Metric::critical_path) + res[0].get_at(1, Metric::critical_path) ==
        Approx(1.6).margin(1e-9));
  CHECK(res[1].get(Metric::critical_path) == Approx(0.0).margin(1e-12));
}

TEST_CASE("a thread that starts its implicit task late takes the path only from its start", "[omp][barrier][critical_path]") {
  // As above, but thread 1 wakes up late: idle until 0.12 (seen under ASan:
  // 3.9 ms of "!$omp idle" on the path).  Until 0.12 the master's kSolve
  // holds the path; the worker's idleness, a wait, is never on it.
  Constructs c{};
  const auto res = barrier_pass(0.12, c);
  CHECK(res[0].get_at(1, Metric::critical_path, c.idle) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get_at(0, Metric::critical_path, c.wait) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get_at(1, Metric::critical_path, kWork) == Approx(0.88).margin(1e-9));
  CHECK(res[0].get_at(0, Metric::critical_path, kSolve) == Approx(0.42).margin(1e-9));
  CHECK(res[0].get_at(0, Metric::critical_path) + res[0].get_at(1, Metric::critical_path) ==
        Approx(1.6).margin(1e-9));
}
