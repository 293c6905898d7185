// Epoch windows: splitting a run into several epochs at synchronizing
// collectives gives the same results as one epoch; messages that cross a cut
// are matched and counted.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Three iterations of: r0 works 1 s, sends to r1 (which waits), then a
// barrier.  `cut` puts an epoch cut after every barrier.
std::vector<VRank> iterations(bool cut) {
  auto r = make_ranks(2);
  double t = 0.0;
  for (int it = 0; it < 3; ++it) {
    r[0].region(t, t + 1.0, kWork);
    r[0].send(t + 1.0, t + 1.1, 1, it);
    r[1].recv(t + 0.2, t + 1.2, 0, it);
    r[0].coll(t + 1.1, t + 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 1.2, t + 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (cut) {
      for (auto& v : r) v.cut();
    }
    t += 1.5;
  }
  for (auto& v : r) v.leave(t);
  return r;
}

// Ends a run at `end` (the root region's Leave; with `barrier`, after a
// world barrier in its last 0.1 s), with requested cuts at `cuts` (none:
// one epoch); replays it, in the random order `seed` if any.
std::vector<RankResult> finish(std::vector<VRank>& r, double end, bool barrier, const std::vector<double>& cuts,
                               std::uint64_t seed = 0) {
  if (barrier) {
    for (auto& v : r) v.coll(end - 0.1, end, rt::kRegion_MPI_Barrier, -1, 0, 0);
  }
  for (auto& v : r) v.leave(end);
  for (double t : cuts) {
    for (auto& v : r) v.requested_cut_at(t);
  }
  return seed == 0 ? replay(r) : replay(r, {"all"}, {seed, true});
}

}  // namespace

TEST_CASE("several epochs equal one epoch", "[epochs]") {
  auto one = iterations(false);
  auto many = iterations(true);
  auto a = replay(one);
  auto b = replay(many);
  REQUIRE(a[0].facts.size() == 1);
  REQUIRE(b[0].facts.size() == 4);
  for (int rank = 0; rank < 2; ++rank) {
    for (Metric m : {Metric::time, Metric::comp, Metric::mpi, Metric::mpi_latesender, Metric::mpi_barrier_wait,
                     Metric::visits, Metric::comms_send}) {
      CHECK(b[rank].get(m) == Approx(a[rank].get(m)));
    }
  }
  CHECK(a[1].get(Metric::mpi_latesender) == Approx(3 * 0.8));
  CHECK(a[0].get(Metric::mpi_barrier_wait) == Approx(3 * 0.1));
}

TEST_CASE("a message crossing a cut is matched in the later epoch", "[epochs][matching]") {
  // r0 Isends at 0.5 (epoch 0); r1 receives it at 2.0 (epoch 1).
  auto r = make_ranks(2);
  r[0].isend(0.5, 0.6, 1, 4, 8, 71);
  r[0].coll(1.0, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[1].coll(1.4, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.cut();
  r[0].complete(1.6, 1.7, rt::kRegion_MPI_Wait, {{71, false}});
  r[1].recv(2.0, 2.1, 0, 4);
  for (auto& v : r) v.leave(3.0);
  auto res = replay(r);
  CHECK(res[1].facts[1].cross_epoch_messages == 1);
  CHECK(res[1].facts[1].unmatched_receives == 0);
  CHECK(res[1].get(Metric::mpi_latesender) == 0.0);
  CHECK(res[1].get(Metric::comms_recv) == 1.0);
}

TEST_CASE("a synchronizing message across a cut is analyzed in the later epoch", "[epochs][matching]") {
  // r0 Issends at 0.5 (epoch 0) and waits for it from 1.6 (epoch 1); r1
  // posts the receive at 2.4, so r0's Wait is a Late Receiver of 2.4 - 1.6,
  // caused by r1's work (2.4 - 1.5 since the barrier, against r0's 0.1).
  auto run = [](bool cut) {
    auto r = make_ranks(2);
    r[0].isend(0.5, 0.6, 1, 4, 8, 71, evflag::kSynchronous);
    r[0].coll(1.0, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(1.4, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (cut) {
      for (auto& v : r) v.cut();
    }
    r[0].complete(1.6, 2.5, rt::kRegion_MPI_Wait, {{71, false}});
    r[1].region(1.5, 2.4, kWork);
    r[1].recv(2.4, 2.45, 0, 4);
    for (auto& v : r) v.leave(3.0);
    return replay(r);
  };
  const auto one = run(false);
  const auto many = run(true);
  CHECK(one[0].get(Metric::mpi_latereceiver) == Approx(0.8));
  CHECK(one[1].get(Metric::delay_latereceiver) == Approx(0.8));
  // The receiver's reply comes back in epoch 1 and meets the Wait there.
  CHECK(many[1].facts[1].cross_epoch_messages == 1);
  CHECK(many[0].get(Metric::mpi_latereceiver) == Approx(0.8));
  CHECK(many[1].get(Metric::delay_latereceiver) == Approx(0.8));
  CHECK(many[0].facts[1].crossing_sync_sends == 0);
}

TEST_CASE("a blocking synchronous send open across a requested cut is a Late Receiver", "[epochs][requested]") {
  // r0 works 1 s and enters MPI_Ssend at 1.0; r1 works 2.4 s before it
  // posts the receive, so r0 waits 1.4 s, caused by r1's work.  A requested
  // cut at 1.5 splits the Ssend: its Enter and Send lie in epoch 0, its
  // Leave (at 2.45) and the whole receive in epoch 1.
  // (With a seed, the replay's steps complete in that random order.)
  auto run = [](bool cut, std::uint64_t seed = 0) {
    auto r = make_ranks(2);
    r[0].region(0.0, 1.0, kWork);
    r[0].send(1.0, 2.45, 1, 4, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
    r[1].region(0.0, 2.4, kWork);
    r[1].recv(2.4, 2.45, 0, 4);
    return finish(r, 3.1, true, cut ? std::vector<double>{1.5} : std::vector<double>{}, seed);
  };
  const auto one = run(false);
  const auto many = run(true, GENERATE(0, 3, 17, 101));
  REQUIRE(many[0].facts.size() == 2);
  CHECK(one[0].get(Metric::mpi_latereceiver) == Approx(1.4));
  CHECK(one[1].get(Metric::delay_latereceiver, kWork) == Approx(1.4));
  CHECK(many[0].get(Metric::mpi_latereceiver) == Approx(1.4));
  CHECK(many[0].get(Metric::mpi_clr_count) == Approx(1.0));
  CHECK(many[1].get(Metric::delay_latereceiver, kWork) == Approx(1.4));
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(many[r].get(Metric::critical_path) == Approx(one[r].get(Metric::critical_path)));
  }
  CHECK(many[0].facts[1].crossing_sync_sends == 0);
}

TEST_CASE("a Late Receiver whose receive was posted before the cut keeps the critical path whole",
          "[epochs][requested]") {
  // r0 enters MPI_Ssend at 1.0; r1 computes until 1.99, posts MPI_Irecv
  // there and completes it with MPI_Wait at 2.02-2.03; r0's Ssend returns
  // at 2.01.  r0 waits 0.99 s for the posting (Late Receiver).  A requested
  // cut at 2.0 leaves the posting in epoch 0 and both completions in epoch
  // 1: the wait is found there, but its cause was walked already (its delay
  // costs are not explained: counted), and the critical path leaves r0 for
  // r1 at the window's start, as for a Late Sender across a cut, instead of
  // at a point r1 does not have.  So the path's 0.01 s between the posting
  // and the cut is r1's instead of r0's; the rest is as in one epoch.
  auto run = [](bool cut) {
    auto r = make_ranks(2);
    r[0].region(0.0, 1.0, kWork);
    r[0].send(1.0, 2.01, 1, 4, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
    r[0].region(2.01, 3.0, kWork);
    r[1].region(0.0, 1.99, kSolve);
    r[1].irecv(1.99, 1.995, 0, 4, 31);
    r[1].region(1.995, 2.02, kWork);
    r[1].complete(2.02, 2.03, rt::kRegion_MPI_Wait, {{31, true, 0, 4}});
    r[1].region(2.03, 3.0, kWork);
    return finish(r, 3.1, true, cut ? std::vector<double>{2.0} : std::vector<double>{});
  };
  const auto one = run(false);
  const auto many = run(true);
  REQUIRE(many[0].facts.size() == 2);
  CHECK(one[0].get(Metric::mpi_latereceiver) == Approx(0.99));
  CHECK(many[0].get(Metric::mpi_latereceiver) == Approx(0.99));
  CHECK(many[1].facts[1].crossing_sync_sends == 1);
  CHECK(one[1].get(Metric::critical_path) == Approx(1.99));
  CHECK(many[1].get(Metric::critical_path) == Approx(2.0));
  CHECK(many[1].get(Metric::critical_path, kSolve) == Approx(one[1].get(Metric::critical_path, kSolve)));
  CHECK(many[0].get(Metric::critical_path) + many[1].get(Metric::critical_path) == Approx(3.1));
}

TEST_CASE("a reply that comes before its send's completion is held for it", "[epochs][requested]") {
  // (a) r0's MPI_Ssend (1.0-2.01) waits for r1's posting at 1.9; r1's
  // receive completes at 1.95, before a cut at 2.0, so the reply comes back
  // in epoch 0 while the Ssend is still open; its Leave is in epoch 1.
  // (b) r0 Issends in epoch 0 and waits for it only in epoch 2 (from 4.5),
  // after r1 received it in epoch 1 (3.0-3.1): no Late Receiver, nothing
  // lost.  Cuts at 2.0 and 4.0.
  auto run = [](bool cut) {
    auto r = make_ranks(2);
    r[0].region(0.0, 1.0, kWork);
    r[0].send(1.0, 2.01, 1, 4, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
    r[0].isend(2.1, 2.2, 1, 5, 8, 71, evflag::kSynchronous);
    r[0].region(2.2, 4.5, kWork);
    r[0].complete(4.5, 4.6, rt::kRegion_MPI_Wait, {{71, false}});
    r[1].region(0.0, 1.9, kSolve);
    r[1].recv(1.9, 1.95, 0, 4);
    r[1].region(1.95, 3.0, kWork);
    r[1].recv(3.0, 3.1, 0, 5);
    return finish(r, 5.1, true, cut ? std::vector<double>{2.0, 4.0} : std::vector<double>{});
  };
  const auto one = run(false);
  const auto many = run(true);
  REQUIRE(many[0].facts.size() == 3);
  CHECK(one[0].get(Metric::mpi_latereceiver) == Approx(0.9));
  CHECK(many[0].get(Metric::mpi_latereceiver) == Approx(0.9));
  std::uint64_t lost_sender = 0;
  for (const auto& f : many[0].facts) lost_sender += f.crossing_sync_sends;
  CHECK(lost_sender == 0);
  // (a)'s posting was walked in epoch 0: its delay costs are not explained
  // (counted by the receiver), the path stays whole.
  CHECK(many[1].facts[1].crossing_sync_sends == 1);
  CHECK(many[0].get(Metric::critical_path) + many[1].get(Metric::critical_path) == Approx(5.1));
}

TEST_CASE("a Late Receiver whose completion lies before the cut is counted", "[epochs][requested]") {
  // r0's MPI_Ssend (1.0-2.0) waits for r1's posting at 1.5 (0.5 s); r1's
  // receive returns only at 2.2.  A cut at 2.1 leaves the whole Ssend in
  // epoch 0 and the receive's completion, with the reply, in epoch 1: the
  // call that waited was analyzed already, so the wait is lost and counted.
  auto run = [](bool cut) {
    auto r = make_ranks(2);
    r[0].send(1.0, 2.0, 1, 4, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
    r[1].recv(1.5, 2.2, 0, 4);
    return finish(r, 3.0, false, cut ? std::vector<double>{2.1} : std::vector<double>{});
  };
  const auto one = run(false);
  const auto many = run(true);
  CHECK(one[0].get(Metric::mpi_latereceiver) == Approx(0.5));
  CHECK(one[0].facts[0].crossing_sync_sends == 0);
  REQUIRE(many[0].facts.size() == 2);
  CHECK(many[0].facts[1].crossing_sync_sends == 1);
  CHECK(many[0].get(Metric::mpi_latereceiver) == 0.0);
}

TEST_CASE("an open receive request across a cut keeps its message", "[epochs][matching]") {
  // r1 posts Irecv(tag 3) in epoch 0 and completes it in epoch 1; in epoch 0
  // it also receives a second message with the same envelope by a blocking
  // Recv posted later.  MPI gives the Irecv the first message (sent at 0.2),
  // the Recv the second (sent at 0.8).
  auto r = make_ranks(2);
  r[0].send(0.2, 0.3, 1, 3);
  r[0].send(0.8, 0.9, 1, 3);
  r[1].irecv(0.1, 0.15, 0, 3, 81);
  r[1].recv(0.4, 0.95, 0, 3);  // waits for the second message: 0.8 - 0.4
  r[0].coll(1.0, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[1].coll(1.0, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.cut();
  r[1].complete(1.6, 1.7, rt::kRegion_MPI_Wait, {{81, true, 0, 3}});
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(0.4));
  CHECK(res[1].facts[1].unmatched_receives == 0);
  CHECK(res[1].facts[1].cross_epoch_messages == 1);
}

TEST_CASE("lost events: the epoch is analyzed for time only", "[epochs]") {
  auto r = make_ranks(2);
  r[0].send(2.0, 2.1, 1);
  r[1].recv(1.0, 2.2, 0);
  for (auto& v : r) v.leave(3.0);
  r[0].dropped = 5;  // rank 0 lost events
  auto res = replay(r);
  CHECK(res[1].facts[0].comm_analysis_skipped);
  CHECK(res[1].get(Metric::mpi_latesender) == 0.0);
  CHECK(res[1].get(Metric::mpi) == Approx(1.2));
}

TEST_CASE("after a window that lost events, receives realign with their sends", "[epochs][matching]") {
  // Rank 0 loses events in epoch 0, so that window is analyzed for time
  // only and its send at 0.2 never reaches the matching.  Rank 1 receives
  // that message in epoch 1 (1.6-1.7), then the next one, which rank 0
  // sends at 2.0 while rank 1 waits from 1.9: a Late Sender of 0.1 s.  The
  // first receive must stay unmatched: pairing it with the send at 2.0
  // (which started after the receive returned) would leave the second
  // receive without a send and lose its wait.
  auto r = make_ranks(2);
  r[0].send(0.2, 0.3, 1, 3);
  r[0].coll(1.0, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[1].coll(1.4, 1.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.cut();
  r[1].recv(1.6, 1.7, 0, 3);
  r[0].send(2.0, 2.1, 1, 3);
  r[1].recv(1.9, 2.2, 0, 3);
  for (auto& v : r) v.leave(3.0);
  r[0].dropped = 5;
  auto res = replay(r);
  CHECK(res[1].facts[0].comm_analysis_skipped);
  CHECK_FALSE(res[1].facts[1].comm_analysis_skipped);
  CHECK(res[1].facts[1].unmatched_receives == 1);
  CHECK(res[1].get(Metric::mpi_latesender, rt::kRegion_MPI_Recv) == Approx(0.1));
}

TEST_CASE("a synchronizing cut keeps the collective's completion where one epoch has it", "[epochs][critical_path]") {
  // r1 enters the barrier last (1.2); r0 leaves at 1.35, the others at 1.3.
  // After it r0 works the longest (1.35 - 3.3) and enters the final barrier
  // last, so the path runs r0 back to its barrier's leave, through the
  // completion 1.2 - 1.35 (r0's, booked on MPI_Barrier), then jumps to r1
  // at 1.2.  (The final barrier's completion 3.3 - 3.5 is r0's too.)  A cut
  // after the first barrier must give the same: the completion is not the
  // last entrant's but the next window's holder's.
  auto run = [](bool cut, std::vector<double> requested = {}) {
    auto r = make_ranks(3);
    r[0].coll(1.0, 1.35, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].region(0.0, 1.2, kWork);
    r[1].coll(1.2, 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[2].coll(1.1, 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    if (cut) {
      for (auto& v : r) v.cut();
    }
    r[0].region(1.35, 3.3, kSolve);
    r[0].coll(3.3, 3.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    for (int k = 1; k < 3; ++k) {
      r[k].region(1.3, 3.0, kSolve);
      r[k].coll(3.0, 3.5, rt::kRegion_MPI_Barrier, -1, 0, 0);
    }
    return finish(r, 3.6, false, requested);
  };
  const auto one = run(false);
  CHECK(one[0].get(Metric::critical_path, rt::kRegion_MPI_Barrier) == Approx(0.15 + 0.2));  // + the final one's
  CHECK(one[1].get(Metric::critical_path, rt::kRegion_MPI_Barrier) == Approx(0.0));
  // The final barrier's waits (0.3 s on r1 and r2) are r0's delay, from
  // its interval since the first barrier's completion began (1.2, not its
  // own Leave): 0.05 s longer in MPI_Barrier (0.15 against 0.1 s) and
  // 0.25 s in kSolve, so 1/6 and 5/6 of each wait.
  CHECK(one[0].get(Metric::delay_barrier) == Approx(0.6));
  CHECK(one[0].get(Metric::delay_barrier, rt::kRegion_MPI_Barrier) == Approx(0.1));
  // The same with the cut, and with a requested cut after it too (the
  // intervals carried across that one start at the completion as well).
  for (const std::vector<double>& requested : {std::vector<double>{}, std::vector<double>{2.0}}) {
    const auto many = run(true, requested);
    for (int rank = 0; rank < 3; ++rank) {
      for (std::uint32_t region : {static_cast<std::uint32_t>(rt::kRegion_MPI_Barrier), kSolve}) {
        CHECK(many[rank].get(Metric::delay_barrier, region) == Approx(one[rank].get(Metric::delay_barrier, region)));
      }
      CHECK(many[rank].get(Metric::critical_path) == Approx(one[rank].get(Metric::critical_path)));
      CHECK(many[rank].get(Metric::critical_path, rt::kRegion_MPI_Barrier) ==
            Approx(one[rank].get(Metric::critical_path, rt::kRegion_MPI_Barrier)));
    }
  }
}
