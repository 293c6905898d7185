// Time, visits and the time categories; exclusive conversion of the metric tree.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;
using onlinews::analysis::CallpathTree;
using onlinews::analysis::kNoCallpath;

TEST_CASE("time categories and visits", "[time]") {
  // main 0-10: solve 1-9 containing work 2-5 and an MPI_Send 5-6, twice work.
  auto r = make_ranks(1);
  r[0].enter(1.0, kSolve);
  r[0].region(2.0, 5.0, kWork);
  r[0].send(5.0, 6.0, 0, 0, 0);
  r[0].region(6.0, 7.0, kWork);
  r[0].leave(9.0);
  r[0].recv(9.0, 9.5, 0);
  r[0].leave(10.0);
  auto res = replay(r);
  const auto& a = *res[0].analyzer;
  CHECK(value(a, Metric::time) == Approx(10.0));
  CHECK(value(a, Metric::time, kWork) == Approx(4.0));
  CHECK(value(a, Metric::time, kSolve) == Approx(8.0 - 5.0));  // exclusive of work and the send
  CHECK(value(a, Metric::comp) == Approx(10.0 - 1.5));
  CHECK(value(a, Metric::mpi) == Approx(1.5));
  CHECK(value(a, Metric::mpi_point2point) == Approx(1.5));
  CHECK(value(a, Metric::execution) == Approx(10.0));
  CHECK(value(a, Metric::visits, kWork) == 2.0);
  CHECK(value(a, Metric::visits, kMain) == 1.0);
}

TEST_CASE("exclusive values in the metric tree", "[metrics]") {
  std::vector<double> v(analysis::kMetricCount, 0.0);
  v[idx(Metric::time)] = 10;
  v[idx(Metric::execution)] = 9;
  v[idx(Metric::onlinews_overhead)] = 1;
  v[idx(Metric::comp)] = 6;
  v[idx(Metric::mpi)] = 3;
  v[idx(Metric::mpi_communication)] = 3;
  v[idx(Metric::mpi_point2point)] = 3;
  v[idx(Metric::mpi_latesender)] = 2;
  v[idx(Metric::mpi_latesender_wo)] = 0.5;
  v[idx(Metric::mpi_lswo_same)] = 0.5;
  const std::vector<double> inclusive = v;
  analysis::to_exclusive(v.data(), 1);
  CHECK(v[idx(Metric::time)] == 0.0);
  CHECK(v[idx(Metric::execution)] == 0.0);
  CHECK(v[idx(Metric::mpi_point2point)] == 1.0);
  CHECK(v[idx(Metric::mpi_latesender)] == 1.5);
  CHECK(v[idx(Metric::mpi_latesender_wo)] == 0.0);
  CHECK(v[idx(Metric::mpi_lswo_same)] == 0.5);
  CHECK(v[idx(Metric::comp)] == 6.0);
  analysis::to_inclusive(v.data());  // (and back)
  CHECK(v == inclusive);
}

namespace {
// An OpenMP construct region (as ompt/constructs.def declares them).
std::uint32_t omp_region(VRank& v, const char* name, analysis::OmpGroup g) {
  v.defs.regions.push_back({name, analysis::RegionKind::Omp, {}, {}, 0, "", 0, g});
  return static_cast<std::uint32_t>(v.defs.regions.size() - 1);
}
}  // namespace

TEST_CASE("OpenMP constructs: management, synchronization, and their code as computation", "[time][omp]") {
  // The master of a team: main 0-10 with a parallel construct 1-9 (fork 1-1.5,
  // join 8.5-9) around its implicit task 1.5-8.5, which holds a loop 2-6
  // (work inside it 2-5, the loop's implicit barrier 5-6) and a critical
  // section 7-8.  Construct regions as ompt/constructs.def declares them.
  auto r = make_ranks(1);
  auto omp = [&r](const char* name, analysis::OmpGroup g) { return omp_region(r[0], name, g); };
  using analysis::OmpGroup;
  const auto parallel = omp("!$omp parallel", OmpGroup::Management);
  const auto task = omp("!$omp implicit task", OmpGroup::Team);
  const auto loop = omp("!$omp for", OmpGroup::Work);
  const auto barrier = omp("!$omp implicit barrier", OmpGroup::Synchronization);
  const auto critical = omp("!$omp critical", OmpGroup::Synchronization);
  r[0].enter(1.0, parallel);
  r[0].enter(1.5, task);
  r[0].enter(2.0, loop);
  r[0].region(2.0, 5.0, kWork);
  r[0].region(5.0, 6.0, barrier);
  r[0].leave(6.0);
  r[0].region(7.0, 8.0, critical);
  r[0].leave(8.5);
  r[0].leave(9.0);
  r[0].leave(10.0);
  auto res = replay(r);
  const auto& a = *res[0].analyzer;
  CHECK(value(a, Metric::omp_management) == Approx(1.0));
  CHECK(value(a, Metric::omp_synchronization) == Approx(2.0));
  CHECK(value(a, Metric::omp_time) == Approx(3.0));
  CHECK(value(a, Metric::comp) == Approx(7.0));
  CHECK(value(a, Metric::time, task) == Approx(7.0 - 4.0 - 1.0));  // exclusive of the loop and the critical section
  CHECK(value(a, Metric::visits, barrier) == 1.0);
}

TEST_CASE("OpenMP barrier waits: tasks run while waiting are not waiting; a worker's time outside its team",
          "[time][omp]") {
  // A worker: its implicit task 0-6 holds an explicit barrier 1-3 (waiting
  // 1.5-3) and an implicit barrier 4-6 (waiting 4-6, of which it runs a task
  // 4.5-5.5); then idle 6-8 until the next region.  Its time outside the
  // implicit task is its master's (omp_idle.cpp; no master here).
  auto r = make_ranks(1);
  auto omp = [&r](const char* name, analysis::OmpGroup g) { return omp_region(r[0], name, g); };
  using analysis::OmpGroup;
  const auto task = omp("!$omp implicit task", OmpGroup::Team);
  const auto ebarrier = omp("!$omp barrier", OmpGroup::ExplicitBarrier);
  const auto ibarrier = omp("!$omp implicit barrier", OmpGroup::ImplicitBarrier);
  const auto wait = omp("!$omp wait", OmpGroup::Wait);
  const auto explicit_task = omp("!$omp task", OmpGroup::Work);
  const auto idle = omp("!$omp idle", OmpGroup::Idle);
  r[0].enter(0.0, task, 4, 1);  // (a team of 4, id 1, as recorded)
  r[0].enter(1.0, ebarrier);
  r[0].region(1.5, 3.0, wait);
  r[0].leave(3.0);
  r[0].enter(4.0, ibarrier);
  r[0].enter(4.0, wait);
  r[0].region(4.5, 5.5, explicit_task);
  r[0].leave(6.0);
  r[0].leave(6.0);
  r[0].leave(6.0);
  r[0].region(6.0, 8.0, idle);
  r[0].leave(10.0);
  auto res = replay(r);
  const auto& a = *res[0].analyzer;
  CHECK(value(a, Metric::omp_ebarrier_wait) == Approx(1.5));
  CHECK(value(a, Metric::omp_ebarrier) == Approx(2.0));
  CHECK(value(a, Metric::omp_ibarrier_wait) == Approx(1.0));
  CHECK(value(a, Metric::omp_ibarrier) == Approx(1.0));
  CHECK(value(a, Metric::omp_idle_threads) == Approx(0.0).margin(1e-12));
  CHECK(value(a, Metric::omp_time) == Approx(2.0 + 1.0));
  CHECK(value(a, Metric::comp) == Approx(6.0 - 3.0));
  CHECK(value(a, Metric::time) == Approx(6.0));
  CHECK(value(a, Metric::time, idle) == Approx(0.0).margin(1e-12));
  CHECK(value(a, Metric::time, explicit_task) == Approx(1.0));
}

TEST_CASE("OpenMP critical sections and locks: waiting is contention, bodies are computation", "[time][omp]") {
  // A critical section requested at 1, acquired at 2.5, released at 3; a
  // lock set 4-4.5 (waiting) and unset 5-5.1.
  auto r = make_ranks(1);
  using analysis::OmpGroup;
  const auto critical = omp_region(r[0], "!$omp critical", OmpGroup::Critical);
  const auto wait = omp_region(r[0], "!$omp wait", OmpGroup::Wait);
  const auto set = omp_region(r[0], "omp_set_lock", OmpGroup::LockWait);
  const auto unset = omp_region(r[0], "omp_unset_lock", OmpGroup::LockApi);
  r[0].enter(1.0, critical);
  r[0].region(1.0, 2.5, wait);
  r[0].leave(3.0);
  r[0].region(4.0, 4.5, set);
  r[0].region(5.0, 5.1, unset);
  r[0].leave(6.0);
  auto res = replay(r);
  const auto& a = *res[0].analyzer;
  CHECK(value(a, Metric::omp_lock_contention_critical) == Approx(1.5));
  CHECK(value(a, Metric::omp_critical) == Approx(1.5));
  CHECK(value(a, Metric::omp_lock_contention_api) == Approx(0.5));
  CHECK(value(a, Metric::omp_lock_api) == Approx(0.6));
  CHECK(value(a, Metric::omp_synchronization) == Approx(2.1));
  CHECK(value(a, Metric::comp) == Approx(6.0 - 2.1));
}

TEST_CASE("call paths of one region under one parent differ by call site", "[callpaths]") {
  CallpathTree t;
  const std::uint32_t root = t.child(kNoCallpath, 1);
  const std::uint32_t a = t.child(root, 2, 0x1000);
  const std::uint32_t b = t.child(root, 2, 0x2000);
  const std::uint32_t plain = t.child(root, 2);
  CHECK(a != b);
  CHECK(plain != a);
  CHECK(t.child(root, 2, 0x1000) == a);  // again: the same node (cache and map agree)
  for (int i = 0; i < 5000; ++i) t.child(root, 3, 0x3000 + static_cast<std::uint64_t>(i));  // evicts the cache
  CHECK(t.child(root, 2, 0x2000) == b);
  CHECK(t.node(b).site == 0x2000);
  CHECK(t.node(b).parent == root);
  CHECK(t.node(b).region == 2);
  CHECK(t.size() == 4 + 5000);
}
