// Probes (seed 004): probe-receive matching, Late Sender in probes, and a
// send that synchronizes with both a probe (Late Sender) and the receive
// (Late Receiver), with delay costs and the critical path for both.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("Late Sender moves from the receive to the probe", "[probe]") {
  // r0 works 0-2 and sends; r1 probes from 0.5 (waits 1.5), then receives.
  auto r = make_ranks(2);
  r[0].region(0.0, 2.0, kWork);
  r[0].send(2.0, 2.1, 1, 7);
  r[1].probe(0.5, 2.05, 0, 7);
  r[1].recv(2.1, 2.2, 0, 7);
  for (auto& v : r) v.leave(3.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == 0.0);
  CHECK(res[1].get(Metric::comms_recv, rt::kRegion_MPI_Recv) == 1.0);
  CHECK(res[1].facts[0].unreceived_probes == 0);
  // The delay is r0's extra work, the path runs through it.
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(1.5));
  CHECK(res[1].get(Metric::mpi_wait_direct_ls, rt::kRegion_MPI_Probe) == Approx(1.5));
}

TEST_CASE("probe matching: repeated probes, matched probes out of order", "[probe]") {
  // r0 sends tag 1 at 1.0 and tag 2 at 2.0.  r1 matched-probes tag 1 (waits
  // 0.5 from 0.5), probes tag 2 twice (the first waits 0.9 from 1.1, the
  // second is a repeat), receives tag 2, then the matched message.
  auto r = make_ranks(2);
  r[0].send(1.0, 1.1, 1, 1);
  r[0].send(2.0, 2.1, 1, 2);
  r[1].probe(0.5, 1.05, 0, 1, /*message=*/1);
  r[1].probe(1.1, 2.05, 0, 2);
  r[1].probe(2.06, 2.07, 0, 2);
  r[1].recv(2.1, 2.2, 0, 2);
  r[1].mrecv(2.3, 2.4, 0, 1, 1);
  for (auto& v : r) v.leave(3.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mprobe) == Approx(0.5));
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(0.9));  // 1.1 -> 2.0, once
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == 0.0);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mrecv) == 0.0);
  CHECK(res[1].get(Metric::comms_recv) == 2.0);
  CHECK(res[1].facts[0].unmatched_receives == 0);
  CHECK(res[1].facts[0].unreceived_probes == 0);
}

TEST_CASE("a probe whose message is never received is analyzed against the message it saw", "[probe]") {
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.1, 1, 3);
  r[1].probe(0.2, 1.05, 0, 3);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].unreceived_probes == 0);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(0.8));
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(0.8));
}

TEST_CASE("a probe whose message an open wildcard receive may take first is counted, not analyzed", "[probe]") {
  auto r = make_ranks(2);
  r[0].send(1.0, 1.1, 1, 3);
  r[1].irecv(0.1, 0.15, kAnySource, 3, /*req=*/5);
  r[1].probe(0.2, 1.05, 0, 3);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].facts[0].unreceived_probes == 1);
  CHECK(res[1].get(Metric::mpi_latesender) == 0.0);
}

TEST_CASE("a requested cut between a probe and its receive keeps the probe's Late Sender", "[probe][cut]") {
  // As in the first case, with r0's send at 2.0-2.02 and r1's probe
  // returning at 2.03; both streams are cut at 2.05, before r1's receive.
  // Both epochs' analyses together equal one epoch's: 1.5 s in the probe,
  // none in the receive, r0's work the delay, and one Ssend as well (its
  // completion after the cut: Late Receiver 2.1 - 2.0 = 0.1 s).
  for (const bool ssend : {false, true}) {
    INFO("synchronous send: " << ssend);
    std::vector<std::vector<RankResult>> results;
    for (const bool cut : {false, true}) {
      auto r = make_ranks(2);
      r[0].region(0.0, 2.0, kWork);
      if (ssend) {
        r[0].send(2.0, 2.12, 1, 7, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
      } else {
        r[0].send(2.0, 2.02, 1, 7);
      }
      r[1].probe(0.5, 2.03, 0, 7);
      r[1].recv(2.1, 2.2, 0, 7);
      for (auto& v : r) v.leave(3.0);
      if (cut) {
        for (auto& v : r) v.requested_cut_at(2.05);
      }
      results.push_back(replay(r));
    }
    for (const auto& res : results) {
      CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(1.5));
      CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == 0.0);
      CHECK(res[1].get(Metric::comms_recv, rt::kRegion_MPI_Recv) == 1.0);
      CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(1.5));
      CHECK(res[1].get(Metric::mpi_wait_direct_ls, rt::kRegion_MPI_Probe) == Approx(1.5));
      CHECK(res[0].get(Metric::mpi_latereceiver) == Approx(ssend ? 0.1 : 0.0));
      for (const auto& f : res[1].facts) {
        CHECK(f.unreceived_probes == 0);
        CHECK(f.clock_violations == 0);
      }
      for (const auto& f : res[0].facts) CHECK(f.crossing_sync_sends == 0);
    }
    CHECK(results[1][1].facts.size() == 2);
  }
}

TEST_CASE("one send, two synchronization points: Late Sender in the probe, Late Receiver in the send",
          "[probe][delay][critical_path]") {
  // Seed 004 §4.2.6.  A (0): fill 0-0.1, sleep1 0.1-1.1, MPI_Ssend from 1.1,
  // which completes when B posts its receive at 3.1.  B (1): probes from 0
  // (waits 1.1 until the send starts), sleep2 1.2-3.1, receives 3.1-3.2,
  // and a last piece of work 3.2-3.4 (B ends last).
  auto r = make_ranks(2);
  r[0].region(0.0, 0.1, kSolve);  // "FillArray"
  r[0].region(0.1, 1.1, kWork);   // "Sleep1"
  r[0].send(1.1, 3.15, 1, 5, 1 << 20, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
  r[0].coll(3.15, 3.4, rt::kRegion_MPI_Finalize, -1, 0, 0);
  r[1].probe(0.0, 1.15, 0, 5);
  r[1].region(1.2, 3.1, kWork);   // "Sleep2"
  r[1].recv(3.1, 3.2, 0, 5);
  r[1].region(3.2, 3.35, kSolve);
  r[1].coll(3.35, 3.4, rt::kRegion_MPI_Finalize, -1, 0, 0);
  for (auto& v : r) v.leave(3.4);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(1.1));
  CHECK(res[0].get(Metric::mpi_latereceiver, rt::kRegion_MPI_Ssend) == Approx(2.0));
  // Late Sender costs: A's fill and sleep1 (1.1 s, B did nothing before).
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(1.0));
  CHECK(res[0].get(Metric::delay_latesender, kSolve) == Approx(0.1));
  // Late Receiver costs: B's time between its probe's wait end (1.1) and
  // its receive (3.1), all of which A spent waiting: the rest of the probe
  // call (0.05), main (0.05) and sleep2 (1.9), 2.0 in all (the interval
  // starts at the send's other synchronization point, the probe).
  CHECK(res[1].get(Metric::delay_latereceiver, kWork) == Approx(1.9));
  CHECK(res[1].get(Metric::delay_latereceiver, rt::kRegion_MPI_Probe) == Approx(0.05));
  CHECK(res[1].get(Metric::delay_latereceiver) == Approx(2.0));
  // Critical path: B (last into Finalize) back to its probe's wait end at
  // 1.1, then A from 1.1 back to the start.
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(1.0));
  CHECK(res[0].get(Metric::critical_path, kSolve) == Approx(0.1));
  CHECK(res[1].get(Metric::critical_path, kWork) == Approx(1.9));
  CHECK(res[0].get(Metric::critical_path, rt::kRegion_MPI_Ssend) == 0.0);  // A's waiting send is not on it
  double total = 0;
  for (auto& x : res) total += x.get(Metric::critical_path);
  CHECK(total == Approx(3.4));
}

TEST_CASE("a probe, then a matched probe of the same message: the first probe waited for it", "[probe][cut]") {
  // r0 sends tag 4 at 1.0 (#1) and 1.5 (#2).  r1 probes from 0.2 (waits
  // 0.8 for #1), matched-probes #1 at 1.06 (found it there), receives it
  // with MPI_Mrecv at 1.1, then receives #2 from 1.3 (waits 0.2).  The
  // same with a requested cut at 1.08, between the probes and MPI_Mrecv.
  for (const bool cut : {false, true}) {
    INFO("cut: " << cut);
    auto r = make_ranks(2);
    r[0].send(1.0, 1.02, 1, 4);
    r[0].send(1.5, 1.52, 1, 4);
    r[1].probe(0.2, 1.05, 0, 4);
    r[1].probe(1.06, 1.07, 0, 4, /*message=*/1);
    r[1].mrecv(1.1, 1.2, 0, 4, 1);
    r[1].recv(1.3, 1.6, 0, 4);
    for (auto& v : r) v.leave(2.0);
    if (cut) {
      for (auto& v : r) v.requested_cut_at(1.08);
    }
    auto res = replay(r);
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Probe) == Approx(0.8));
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mprobe) == 0.0);
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mrecv) == 0.0);
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(0.2));
    CHECK(res[1].get(Metric::comms_recv) == 2.0);
    for (const auto& f : res[1].facts) {
      CHECK(f.unreceived_probes == 0);
      CHECK(f.unmatched_receives == 0);
    }
  }
}

TEST_CASE("a matched probe's message stays its own across a cut", "[probe][cut]") {
  // r0 sends tag 4 at 1.0 (#1) and 1.2 (#2).  r1 matched-probes #1 from
  // 0.5 (waits 0.5); after a requested cut at 1.1 it receives from 1.15
  // with MPI_Recv, which gets #2 (waits 0.05: #1 is the matched probe's),
  // then #1 with MPI_Mrecv.  One epoch says the same.
  for (const bool cut : {false, true}) {
    INFO("cut: " << cut);
    auto r = make_ranks(2);
    r[0].send(1.0, 1.02, 1, 4);
    r[0].send(1.2, 1.22, 1, 4);
    r[1].probe(0.5, 1.05, 0, 4, /*message=*/1);
    r[1].recv(1.15, 1.3, 0, 4);
    r[1].mrecv(1.4, 1.5, 0, 4, 1);
    for (auto& v : r) v.leave(2.0);
    if (cut) {
      for (auto& v : r) v.requested_cut_at(1.1);
    }
    auto res = replay(r);
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mprobe) == Approx(0.5));
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(0.05));
    CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Mrecv) == 0.0);
    for (const auto& f : res[1].facts) {
      CHECK(f.unreceived_probes == 0);
      CHECK(f.unmatched_receives == 0);
      CHECK(f.clock_violations == 0);
    }
  }
}
