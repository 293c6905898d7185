// Late Sender, Wrong Order: a late message was waited for while an earlier
// sent one was already there.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("wrong order from a different source", "[wrong_order]") {
  // r2 receives first from r0 (sent at 5; receive entered at 1: Late Sender
  // of 4 s) and then from r1, whose message was sent at 2 -- earlier than
  // r0's.  The 4 s become Wrong Order, different source.
  auto r = make_ranks(3);
  r[0].send(5.0, 5.1, 2);
  r[1].send(2.0, 2.1, 2);
  r[2].recv(1.0, 5.2, 0);
  r[2].recv(5.3, 5.4, 1);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[2].get(Metric::mpi_latesender) == Approx(4.0));
  CHECK(res[2].get(Metric::mpi_latesender_wo) == Approx(4.0));
  CHECK(res[2].get(Metric::mpi_lswo_different) == Approx(4.0));
  CHECK(res[2].get(Metric::mpi_lswo_same) == 0.0);
  CHECK(res[2].get(Metric::mpi_clswo_count) == 1.0);
}

TEST_CASE("wrong order from the same source", "[wrong_order]") {
  // r0 sends tag 2 at 1 and tag 1 at 5; r1 receives tag 1 first (entered at
  // 0.5: waits 4.5 s), then tag 2 which was sent before: same source.
  auto r = make_ranks(2);
  r[0].send(1.0, 1.1, 1, 2, 0);
  r[0].send(5.0, 5.1, 1, 1, 0);
  r[1].recv(0.5, 5.2, 0, 1);
  r[1].recv(5.3, 5.4, 0, 2);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_lswo_same) == Approx(4.5));
  CHECK(res[1].get(Metric::mpi_lswo_different) == 0.0);
  CHECK(res[1].get(Metric::mpi_slswo_count) == 1.0);  // zero-byte messages
}

TEST_CASE("in-order late senders are not wrong order", "[wrong_order]") {
  auto r = make_ranks(3);
  r[0].send(2.0, 2.1, 2);
  r[1].send(4.0, 4.1, 2);
  r[2].recv(1.0, 2.2, 0);
  r[2].recv(2.3, 4.2, 1);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[2].get(Metric::mpi_latesender) == Approx(1.0 + 1.7));
  CHECK(res[2].get(Metric::mpi_latesender_wo) == 0.0);
}
