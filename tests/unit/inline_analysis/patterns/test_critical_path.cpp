// The critical path segment of an epoch, on hand-built streams.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("the critical path follows the wait states back to their causes", "[critical_path]") {
  // A (0): work 0-2, sends to B at 2, barrier from 2.1.
  // B (1): receive entered at 0.5, the message comes at 2: waits 1.5; solve
  //   2.2-3.2, sends to C at 3.2, barrier from 3.3.
  // C (2): receive entered at 0.1 waits until 3.2; work 3.4-4.0; barrier from
  //   4.0 (the last to enter); everyone leaves at 4.1.
  // Backward from C: C 3.2-4.1 (0.9: Recv 0.2, work 0.6, Barrier 0.1), B
  // 2.0-3.2 (1.2: Recv 0.2, solve 1.0), A 0-2.0 (work 2.0): total 4.1.
  auto r = make_ranks(3);
  r[0].region(0.0, 2.0, kWork);
  r[0].send(2.0, 2.1, 1);
  r[0].coll(2.1, 4.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[1].recv(0.5, 2.2, 0);
  r[1].region(2.2, 3.2, kSolve);
  r[1].send(3.2, 3.3, 2);
  r[1].coll(3.3, 4.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[2].recv(0.1, 3.4, 1);
  r[2].region(3.4, 4.0, kWork);
  r[2].coll(4.0, 4.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(4.1);
  auto res = replay(r);
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(2.0));
  CHECK(res[0].get(Metric::critical_path) == Approx(2.0));
  CHECK(res[1].get(Metric::critical_path, kSolve) == Approx(1.0));
  CHECK(res[1].get(Metric::critical_path, rt::kRegion_MPI_Recv) == Approx(0.2));
  CHECK(res[1].get(Metric::critical_path) == Approx(1.2));
  CHECK(res[2].get(Metric::critical_path, kWork) == Approx(0.6));
  CHECK(res[2].get(Metric::critical_path) == Approx(0.9));
  double total = 0;
  for (auto& x : res) total += x.get(Metric::critical_path);
  CHECK(total == Approx(4.1));  // the window's span; no waiting on the path
}

TEST_CASE("the critical path of several epochs equals that of one", "[critical_path][epochs]") {
  // Two iterations of: rank r works r+1 s (1, 2, 3), barrier.  Each
  // iteration's path runs on rank 2 (3 s of work) then the barrier.
  auto build = [](bool cut) {
    auto r = make_ranks(3);
    double t = 0;
    for (int it = 0; it < 2; ++it) {
      for (int i = 0; i < 3; ++i) {
        r[i].region(t, t + 1.0 + i, kWork);
        r[i].coll(t + 1.0 + i, t + 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
      }
      if (cut) {
        for (auto& v : r) v.cut();
      }
      t += 3.1;
    }
    for (auto& v : r) v.leave(t);
    return r;
  };
  auto one = build(false), many = build(true);
  auto a = replay(one), b = replay(many);
  for (int i = 0; i < 3; ++i) {
    CHECK(b[i].get(Metric::critical_path) == Approx(a[i].get(Metric::critical_path)));
    CHECK(b[i].get(Metric::delay_barrier) == Approx(a[i].get(Metric::delay_barrier)));
  }
  CHECK(a[2].get(Metric::critical_path, kWork) == Approx(6.0));
  CHECK(a[2].get(Metric::critical_path) == Approx(6.2));
  CHECK(a[0].get(Metric::critical_path) == Approx(0.0).margin(1e-12));
  CHECK(a[2].get(Metric::delay_barrier, kWork) == Approx(2 * (2.0 + 1.0)));
}
