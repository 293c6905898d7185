// MPI calls of several threads of a rank that overlap in time
// (MPI_THREAD_MULTIPLE, inline_analysis/concurrency.cpp): messages are
// matched per envelope, ambiguous ones are counted and left out, and each
// thread keeps its own synchronization intervals.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Ranks whose threads share MPI (MPI_THREAD_MULTIPLE).
std::vector<VRank> multiple_ranks(int n) {
  auto r = make_ranks(n);
  for (auto& v : r) v.defs.threads_share_mpi = true;
  return r;
}

// Both ranks' main threads end in a barrier at 3.0.
void finish(std::vector<VRank>& r) {
  for (auto& v : r) {
    v.on(0);
    v.coll(3.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
    v.leave(3.1);
  }
}

}  // namespace

TEST_CASE("threads exchanging at once on their own tags: exact, each thread's intervals its own",
          "[concurrency]") {
  auto r = multiple_ranks(2);
  // Rank 0: thread 1 works (kWork) until 1.0 and sends tag 1; thread 2
  // works (kSolve) until 2.0 and sends tag 2.
  r[0].on(1).region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.01, 1, 1);
  r[0].leave(3.0);
  r[0].on(2).region(0.0, 2.0, kSolve);
  r[0].send(2.0, 2.01, 1, 2);
  r[0].leave(3.0);
  // Rank 1: both threads post their receives at 0.1, at once.
  r[1].on(1).recv(0.1, 1.01, 0, 1);  // Late Sender 0.9 s
  r[1].leave(3.0);
  r[1].on(2).recv(0.1, 2.01, 0, 2);  // Late Sender 1.9 s
  r[1].leave(3.0);
  finish(r);
  const auto res = replay(r);
  CHECK(res[1].facts[0].concurrent_mpi_windows == 1);
  CHECK(res[1].facts[0].ambiguous_messages == 0);
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.9).margin(1e-9));
  CHECK(res[1].get_at(2, Metric::mpi_latesender) == Approx(1.9).margin(1e-9));
  // Thread 2's interval on rank 0 runs from the window's start (its own
  // previous point), not from thread 1's send at 1.0: its 2 s of kSolve
  // against the receiver's 0.1 s explain the whole 1.9 s (from 1.0 on, only
  // 1 s of kSolve would be left: 1.0 s of cost).
  CHECK(res[0].get_at(2, Metric::delay_latesender, kSolve) == Approx(1.9).margin(1e-9));
  CHECK(res[0].get_at(1, Metric::delay_latesender, kWork) == Approx(0.9).margin(1e-9));
  CHECK(res[0].get_at(1, Metric::delay) + res[0].get_at(2, Metric::delay) == Approx(0.9 + 1.9).margin(1e-9));
}

TEST_CASE("overlapping sends of two threads on one envelope: matched, not analyzed", "[concurrency]") {
  // Rank 0's threads send on tag 5 with overlapping calls: MPI may have
  // ordered them either way.  Thread 1 sends a third message alone, later.
  // Rank 1 receives all three on one thread.
  auto r = multiple_ranks(2);
  r[0].on(1).send(1.0, 1.5, 1, 5);
  r[0].send(2.0, 2.01, 1, 5);
  r[0].leave(3.0);
  r[0].on(2).send(1.2, 1.3, 1, 5);
  r[0].leave(3.0);
  r[1].on(1).recv(0.1, 1.6, 0, 5);
  r[1].recv(1.7, 1.8, 0, 5);
  r[1].recv(1.9, 2.5, 0, 5);
  r[1].leave(3.0);
  finish(r);
  const auto res = replay(r);
  CHECK(res[1].facts[0].ambiguous_messages == 2);
  CHECK(res[1].facts[0].unmatched_receives == 0);
  // Only the third message is analyzed: its receive waited 0.1 s.
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.1).margin(1e-9));
}

TEST_CASE("overlapping receives of two threads on one envelope: matched, not analyzed", "[concurrency]") {
  auto r = multiple_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.01, 1, 5);
  r[0].send(2.0, 2.01, 1, 5);
  r[0].send(2.5, 2.51, 1, 6);  // another envelope: analyzed
  r[1].on(1).recv(0.1, 1.01, 0, 5);
  r[1].leave(3.0);
  r[1].on(2).recv(0.2, 2.01, 0, 5);
  r[1].recv(2.2, 2.51, 0, 6);  // Late Sender 0.3 s
  r[1].leave(3.0);
  finish(r);
  const auto res = replay(r);
  CHECK(res[1].facts[0].ambiguous_messages == 2);
  CHECK(res[1].facts[0].unmatched_receives == 0);
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.0).margin(1e-12));
  CHECK(res[1].get_at(2, Metric::mpi_latesender) == Approx(0.3).margin(1e-9));
}

TEST_CASE("a send open at a requested cut ends its group at its Leave: another thread's later send is exact",
          "[concurrency]") {
  // Rank 0's thread 1 is inside a blocking send on tag 5 from 1.0 to 2.5,
  // across the requested cut at 2.0 (its Leave falls into the second
  // window); thread 2 sends on tag 5 at 3.0, after thread 1's call
  // returned: MPI orders the two messages, nothing is ambiguous.  Rank 1's
  // thread 1 receives both; the second receive, posted at 2.9, waits 0.1 s.
  // Thread 2 sends tag 6 first, so that both threads call MPI in the first
  // window (one thread's calls alone are its own view, with nothing to
  // carry).
  // (The window before's last group on the envelope once stayed open for
  // good, and the second message was counted ambiguous.)
  auto r = multiple_ranks(2);
  r[0].on(1).send(1.0, 2.5, 1, 5);
  r[0].leave(2.6);
  r[0].on(2).send(0.5, 0.51, 1, 6);  // (both threads call MPI in the first window)
  r[0].region(0.6, 3.0, kWork);
  r[0].send(3.0, 3.01, 1, 5);
  r[0].leave(3.5);
  r[1].on(1).recv(0.1, 1.01, 0, 5);
  r[1].recv(2.9, 3.01, 0, 5);
  r[1].leave(3.5);
  r[1].on(2).recv(0.2, 0.51, 0, 6);  // Late Sender 0.3 s
  r[1].leave(3.5);
  for (auto& v : r) v.on(0).requested_cut(2.0);
  finish(r);
  const auto res = replay(r);
  REQUIRE(res[1].facts.size() == 2);
  CHECK(res[0].facts[1].ambiguous_messages + res[1].facts[1].ambiguous_messages == 0);
  CHECK(res[1].facts[0].unmatched_receives + res[1].facts[1].unmatched_receives == 0);
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.9 + 0.1).margin(1e-9));
  CHECK(res[1].get_at(2, Metric::mpi_latesender) == Approx(0.3).margin(1e-9));
}

TEST_CASE("a receive posted by a call open at a requested cut does not hold its envelope's group open",
          "[concurrency]") {
  // Rank 1's thread 1 is inside MPI_Irecv (tag 5) from 1.9 to 2.1, across
  // the cut at 2.0, and completes it in MPI_Wait at 2.5; its thread 2
  // receives on tag 5 at 3.0, long after: nothing overlapped.  (The
  // posting's end is not kept across the cut; it once stayed open.)
  auto r = multiple_ranks(2);
  r[0].on(1).send(2.4, 2.41, 1, 5);
  r[0].send(3.2, 3.21, 1, 5);
  r[0].leave(3.5);
  r[0].on(2).send(0.5, 0.51, 1, 6);
  r[0].leave(3.5);
  r[1].on(1).irecv(1.9, 2.1, 0, 5, 1);
  r[1].complete(2.3, 2.41, rt::kRegion_MPI_Wait, {{1, true, 0, 5}});  // Late Sender 0.1 s
  r[1].leave(2.6);
  r[1].on(2).recv(0.2, 0.51, 0, 6);  // (both threads call MPI in the first window)
  r[1].recv(3.0, 3.21, 0, 5);        // Late Sender 0.2 s
  r[1].leave(3.5);
  for (auto& v : r) v.on(0).requested_cut(2.0);
  finish(r);
  const auto res = replay(r);
  REQUIRE(res[1].facts.size() == 2);
  CHECK(res[1].facts[1].ambiguous_messages == 0);
  CHECK(res[1].facts[0].unmatched_receives + res[1].facts[1].unmatched_receives == 0);
  CHECK(res[1].get_at(2, Metric::mpi_latesender) == Approx(0.3 + 0.2).margin(1e-9));
}
