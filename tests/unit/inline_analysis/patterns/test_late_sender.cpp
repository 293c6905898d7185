// Late Sender on hand-built streams: blocking receives, Sendrecv, Wait* and
// Test* completions, counts and bytes.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("late sender chain over four ranks", "[late_sender]") {
  // r0 computes until 3 and sends to r1; r1 waits in Recv from 1 to 3 (2 s),
  // then sends to r2 at 4; r2 waits from 1 to 4 (3 s); r3 receives from r2
  // at 5 after the send started at 4.5: no waiting.
  auto r = make_ranks(4);
  r[0].region(0.5, 3.0, kWork);
  r[0].send(3.0, 3.1, 1);
  r[1].recv(1.0, 3.2, 0);
  r[1].send(4.0, 4.1, 2);
  r[2].recv(1.0, 4.2, 1);
  r[2].send(4.5, 4.6, 3, 0, 0);
  r[3].recv(5.0, 5.1, 2);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latesender) == 0.0);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(2.0));
  CHECK(res[2].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(3.0));
  CHECK(res[3].get(Metric::mpi_latesender) == 0.0);
  // Instances by message size: r1 and r2 got 8 bytes, r3 a zero-byte message.
  CHECK(res[1].get(Metric::mpi_cls_count) == 1.0);
  CHECK(res[2].get(Metric::mpi_cls_count) == 1.0);
  CHECK(res[3].get(Metric::mpi_sls_count) == 0.0);
  CHECK(res[3].get(Metric::syncs_recv) == 1.0);
  CHECK(res[2].get(Metric::syncs_send) == 1.0);
  CHECK(res[1].get(Metric::bytes_rcvd) == 8.0);
  CHECK(res[0].get(Metric::bytes_sent) == 8.0);
  CHECK(res[1].get(Metric::comms_recv) == 1.0);
}

TEST_CASE("late sender is capped at the receive's leave", "[late_sender]") {
  // Impossible in a real run, but clocks can be off: the send "starts" after
  // the receive returned.  The clock correction moves the receive's end to
  // the send (test_clock_condition.cpp); whatever it does, the wait never
  // exceeds the receive's (corrected) duration.
  auto r = make_ranks(2);
  r[0].send(5.0, 5.1, 1);
  r[1].recv(1.0, 2.0, 0);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 1);
  const double recv = res[1].get(Metric::time, rt::kRegion_MPI_Recv);
  CHECK(res[1].get(Metric::mpi_latesender) > 0.0);
  CHECK(res[1].get(Metric::mpi_latesender) <= recv + 1e-9);
}

TEST_CASE("late sender in Sendrecv", "[late_sender]") {
  // Both ranks exchange with MPI_Sendrecv; r1 enters at 1, r0 at 2.5.
  auto r = make_ranks(2);
  for (int me = 0; me < 2; ++me) {
    const double t0 = me == 0 ? 2.5 : 1.0;
    r[me].enter(t0, rt::kRegion_MPI_Sendrecv);
    r[me].events.push_back(Event::message(EventKind::Send, ns(t0), 0, 1 - me, 7, 16));
    r[me].events.push_back(Event::message(EventKind::Recv, ns(2.6), 0, 1 - me, 7, 0));
    r[me].leave(2.6);
    r[me].leave(3.0);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latesender) == 0.0);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Sendrecv) == Approx(1.5));
}

TEST_CASE("Waitall counts one Late Sender with the largest wait", "[late_sender]") {
  // r0 posts three receives at 0.1-0.3 and waits from 1 to 4.1; the sends
  // start at 2 (r1), 4 (r2) and 0.5 (r3): one instance of 4 - 1 = 3 s.
  auto r = make_ranks(4);
  r[0].irecv(0.1, 0.15, 1, 0, 11);
  r[0].irecv(0.2, 0.25, 2, 0, 12);
  r[0].irecv(0.3, 0.35, 3, 0, 13);
  r[0].complete(1.0, 4.1, rt::kRegion_MPI_Waitall, {{11, true, 1, 0}, {12, true, 2, 0}, {13, true, 3, 0}});
  r[1].send(2.0, 2.1, 0);
  r[2].send(4.0, 4.1, 0);
  r[3].send(0.5, 0.6, 0);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latesender, rt::kRegion_MPI_Waitall) == Approx(3.0));
  CHECK(res[0].get(Metric::mpi_cls_count) == 1.0);
  CHECK(res[0].get(Metric::comms_recv) == 3.0);
}

TEST_CASE("Wait after Irecv waits for the late send; Test does not", "[late_sender]") {
  auto r = make_ranks(2);
  r[1].irecv(0.1, 0.2, 0, 5, 21);
  r[1].complete(1.0, 3.0, rt::kRegion_MPI_Wait, {{21, true, 0, 5}});
  r[1].irecv(3.1, 3.2, 0, 6, 22);
  r[1].complete(3.3, 5.1, rt::kRegion_MPI_Test, {{22, true, 0, 6}}, /*by_test=*/true);
  r[0].send(2.5, 2.6, 1, 5);
  r[0].send(5.0, 5.05, 1, 6);
  for (auto& v : r) v.leave(6.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Wait) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Test) == 0.0);
  CHECK(res[1].get(Metric::comms_recv) == 2.0);  // both receives are still counted
}

TEST_CASE("receives match sends by source, tag and posting order", "[late_sender][matching]") {
  // r0 sends tag 1 at 1.0 and tag 2 at 3.0 to r1.  r1 posts an Irecv for
  // tag 2 first, then receives tag 1 (no wait: sent at 1.0), then waits for
  // the tag-2 receive from 2.0: Late Sender of 1 s.
  auto r = make_ranks(2);
  r[0].send(1.0, 1.1, 1, 1);
  r[0].send(3.0, 3.1, 1, 2);
  r[1].irecv(0.5, 0.6, 0, 2, 31);
  r[1].recv(0.9, 1.2, 0, 1);
  r[1].complete(2.0, 3.2, rt::kRegion_MPI_Wait, {{31, true, 0, 2}});
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(0.1));
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Wait) == Approx(1.0));
  CHECK(res[1].facts[0].unmatched_receives == 0);
}

TEST_CASE("same envelope: receives take messages in posting order", "[matching]") {
  // Two Irecvs with the same envelope, completed in reverse order by two
  // Waits: MPI gives the first posted receive the first message (sent at 1),
  // the second one the second message (sent at 4).
  auto r = make_ranks(2);
  r[0].send(1.0, 1.1, 1, 9);
  r[0].send(4.0, 4.1, 1, 9);
  r[1].irecv(0.1, 0.2, 0, 9, 41);
  r[1].irecv(0.3, 0.4, 0, 9, 42);
  r[1].complete(2.0, 4.2, rt::kRegion_MPI_Wait, {{42, true, 0, 9}});  // second posted: message at 4.0
  r[1].complete(4.3, 4.4, rt::kRegion_MPI_Wait, {{41, true, 0, 9}});  // first posted: message at 1.0
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(2.0));  // only the first Wait waited, 2.0 -> 4.0
}
