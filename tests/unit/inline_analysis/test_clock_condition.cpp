// Clock-condition correction (clock_condition.cpp): receives and probes that
// appear before their send are moved to it (forward amortization, repeated
// as corrected sends reach their receivers), the events before each jump
// follow on a ramp (backward amortization) that never pushes a send past
// its message's probe or receive.  gamma = 0.99: after a jump, later
// intervals shrink by 1 % until the shift is gone; ramps reach back 100 x
// the jump.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {
std::uint64_t violations(const std::vector<RankResult>& res) {
  std::uint64_t v = 0;
  for (const auto& r : res) v += r.facts[0].clock_violations;
  return v;
}
std::uint64_t corrected(const std::vector<RankResult>& res) {
  std::uint64_t v = 0;
  for (const auto& r : res) v += r.facts[0].clock_violations_corrected;
  return v;
}
}  // namespace

TEST_CASE("no violation: nothing is counted or moved", "[clock]") {
  // r1's receive ends exactly when r0's send starts: the clock condition holds.
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.1, 1);
  r[1].recv(0.2, 1.0, 0);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(violations(res) == 0);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(0.8));
  CHECK(res[1].get(Metric::time, rt::kRegion_MPI_Recv) == Approx(0.8));
}

TEST_CASE("a receive before its send moves to the send (forward amortization)", "[clock]") {
  // r0 works until 1.0 and sends.  r1's clock reads 0.2 ms early: it enters
  // MPI_Recv at 0.1 and its receive seems to end at 0.9998, before the send.
  // Corrected, the receive ends at 1.0, so MPI_Recv lasts 0.9 s, all of it
  // Late Sender.  Then r1 works from 0.9999 to 1.4999: its enter keeps the
  // 0.2 ms shift less 1 % of the 0.1 ms step (1.000099); over the 0.5 s of
  // work the shift decays (1 % of 0.5 s is 5 ms), so the work ends at its
  // recorded time and lasts 1.4999 - 1.000099 s.
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].recv(0.1, 0.9998, 0);
  r[1].region(0.9999, 1.4999, kWork);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(violations(res) == 1);
  CHECK(corrected(res) == 1);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(0.9).margin(1e-9));
  CHECK(res[1].get(Metric::time, rt::kRegion_MPI_Recv) == Approx(0.9).margin(1e-9));
  CHECK(res[1].get(Metric::time, kWork) == Approx(1.4999 - 1.000099).margin(1e-8));
}

TEST_CASE("the events before a jump follow on a ramp (backward amortization)", "[clock]") {
  // r1 works 0-0.99, then MPI_Recv from 0.99; its receive ends at 0.9995,
  // 0.5 ms before r0's send at 1.0: a jump of 0.5 ms.  The ramp reaches back
  // 100 x 0.5 ms = 50 ms, to 0.9495, and lifts an event at t by
  // 0.5 ms x (t - 0.9495) / 0.05: the end of work and the enter of MPI_Recv
  // at 0.99 move by 0.405 ms.  So work lasts 0.990405 s and the Late Sender
  // is 1.0 - 0.990405 = 9.595 ms (10 ms as recorded; the truth, with r1's
  // clock 0.5 ms early, would be 9.5 ms).
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].region(0.0, 0.99, kWork);
  r[1].recv(0.99, 0.9995, 0);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(violations(res) == 1);
  CHECK(corrected(res) == 1);
  CHECK(res[1].get(Metric::time, kWork) == Approx(0.990405).margin(1e-8));
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(0.009595).margin(1e-8));
}

TEST_CASE("a ramp never moves a send past its probe", "[clock]") {
  // r1 sends to r2 at 0.998, then receives r0's message: that receive ends
  // at 0.9995, 0.5 ms before r0's send at 1.0 (a jump).  The full ramp would
  // lift r1's send by 0.5 ms x (0.998 - 0.9495) / 0.05 = 0.485 ms, past r2's
  // probe, which returned at 0.99801 (10 us after the send began).  r2
  // reports that limit, the ramp is flattened to fit, and r2 sees no
  // violation: its probe's Late Sender stays between 0.998 and 0.99801.
  auto r = make_ranks(3);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].send(0.998, 0.9981, 2);
  r[1].recv(0.9982, 0.9995, 0);
  r[2].probe(0.0, 0.99801, 1, 0);
  r[2].recv(0.99802, 0.99803, 1, 0);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 1);
  CHECK(res[2].facts[0].clock_violations == 0);
  CHECK(corrected(res) == 1);
  const double ls = res[2].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe);
  CHECK(ls >= 0.998 - 1e-9);
  CHECK(ls <= 0.99801 + 1e-9);
  // r1's MPI_Recv still starts no earlier than recorded and ends at r0's send.
  CHECK(res[1].get(Metric::mpi_latesender) <= 1.0 - 0.9982 + 1e-9);
}

TEST_CASE("a call that starts several sends moves no further than the tightest allows", "[clock]") {
  // As above, but r1's MPI_Startall at 0.998 starts two sends: to r2, whose
  // probe returns 10 us later (little room), and to r3, received at 1.5
  // (much room).  The ramp must respect the smaller room: r2 sees no
  // violation and its Late Sender stays between 0.998 and 0.99801.
  auto r = make_ranks(4);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].enter(0.998, rt::kRegion_MPI_Startall);
  r[1].events.push_back(Event::message(EventKind::SendRequest, ns(0.998), 0, 2, 0, 8, 1));
  r[1].events.push_back(Event::message(EventKind::SendRequest, ns(0.998), 0, 3, 0, 8, 2));
  r[1].leave(0.9981);
  r[1].recv(0.9982, 0.9995, 0);
  r[1].complete(1.2, 1.3, rt::kRegion_MPI_Waitall, {{1, false}, {2, false}});
  r[2].probe(0.0, 0.99801, 1, 0);
  r[2].recv(0.99802, 0.99803, 1, 0);
  r[3].recv(1.4, 1.5, 1, 0);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 1);
  CHECK(res[2].facts[0].clock_violations == 0);
  CHECK(res[3].facts[0].clock_violations == 0);
  const double ls = res[2].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe);
  CHECK(ls >= 0.998 - 1e-9);
  CHECK(ls <= 0.99801 + 1e-9);
}

TEST_CASE("corrected sends travel on: violations along a chain", "[clock]") {
  // r0 sends at 1.0.  r1's receive seems to end at 0.999 (1 ms early) and r1
  // forwards at once (0.99901).  Corrected, r1's receive ends at 1.0 and its
  // send starts 10 us later minus 1 % of that: 1.0000099.  r2's receive,
  // recorded at 0.99905, was fine against the recorded send but precedes
  // the corrected one, so it is corrected in the next round: r2's Late
  // Sender is 1.0000099 - 0.2.
  auto r = make_ranks(3);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].recv(0.1, 0.999, 0);
  r[1].send(0.99901, 0.99902, 2);
  r[2].recv(0.2, 0.99905, 1);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 1);
  CHECK(res[2].facts[0].clock_violations == 1);
  CHECK(corrected(res) == 2);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(0.9).margin(1e-9));
  CHECK(res[2].get(Metric::mpi_latesender) == Approx(1.0000099 - 0.2).margin(1e-8));
}

TEST_CASE("probes are held to the clock condition too", "[clock]") {
  // r1's probe seems to return at 0.9997, before r0's send at 1.0; the
  // receive after it (0.9998) also precedes the send.  Both are corrected;
  // the Late Sender (in the probe) is 1.0 - 0.3.
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1, 4);
  r[1].probe(0.3, 0.9997, 0, 4);
  r[1].recv(0.99975, 0.9998, 0, 4);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 2);
  CHECK(corrected(res) == 2);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(0.7).margin(1e-9));
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == 0.0);
}

TEST_CASE("a shift left at a cut decays on in the next window", "[clock]") {
  // r1's receive seems to end at 0.999, 1 ms before r0's send at 1.0; r1
  // then enters "work" at 0.99901 (corrected: 1.0000099) and the epoch ends.
  // The work ends 0.5 ms later, at 0.99951, in the next window.  Carrying
  // the shift on, that Leave moves to 1.0000099 + 0.0005 - 1 % of 0.0005, so
  // work lasts 0.495 ms (without the carry: -0.5 ms).
  auto r = make_ranks(2);
  r[0].send(1.0, 1.0001, 1);
  r[0].cut();
  r[1].recv(0.1, 0.999, 0);
  r[1].enter(0.99901, kWork);
  r[1].cut();
  r[1].leave(0.99951);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].clock_violations == 1);
  CHECK(res[1].facts[1].clock_violations == 0);
  CHECK(res[1].get(Metric::time, kWork) == Approx(0.000495).margin(1e-9));
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(0.9).margin(1e-9));
}

TEST_CASE("a Late Receiver is measured from the corrected posting, also across a cut", "[clock][late_receiver]") {
  // r1's clock reads 0.1 s early: its receive of message A seems to end at
  // 0.74, before r0 sent A at 0.84, and moves to 0.84.  Its Irecv of B,
  // recorded at 0.95, keeps that shift less 1 % of the 0.21 s step:
  // 0.84 + 0.21 - 0.0021 = 1.0479.  r0's Wait for its Issend of B enters at
  // 0.98, so it waits 1.0479 - 0.98 = 0.0679 s for the posting (recorded
  // times would say none).  With a requested cut at 0.97 the posting lies
  // in the window before the Wait: its corrected times travel with the
  // open request into the next window.
  for (const bool cut : {false, true}) {
    auto r = make_ranks(2);
    r[0].send(0.84, 0.8401, 1, 1);
    r[0].isend(0.841, 0.8411, 1, 2, 8, 5, evflag::kSynchronous);
    r[0].complete(0.98, 2.0, rt::kRegion_MPI_Wait, {{5, false}});
    r[1].recv(0.1, 0.74, 0, 1);
    r[1].irecv(0.95, 0.9501, 0, 2, 7);
    r[1].complete(1.5, 1.6, rt::kRegion_MPI_Wait, {{7, true, 0, 2}});
    for (auto& v : r) v.leave(2.5);
    if (cut) {
      for (auto& v : r) v.requested_cut_at(0.97);
    }
    auto res = replay(r);
    INFO("requested cut: " << cut);
    CHECK(res[1].facts[0].clock_violations == 1);
    CHECK(res[0].get(Metric::mpi_latereceiver) == Approx(1.0479 - 0.98).margin(1e-6));
  }
}
