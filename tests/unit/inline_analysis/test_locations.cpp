// Every location (rank, thread) takes part in the communication analysis:
// MPI calls of any thread are matched, their wait states and delay costs are
// booked on that thread, and synchronization intervals are measured on the
// thread of the call that ends them (inline_analysis/mpi_view.cpp).
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Rank 0 (one thread): kWork 0-1, sends tag 1 to rank 1 at 1.0-1.01, then
// receives tag 2 from rank 1 from 1.01.
// Rank 1, thread 0: kSolve 0-2, sends tag 2 to rank 0 at 2.0-2.01.
// Rank 1, thread 1: receives tag 1 from 0.2: waits until 1.0 (0.8 s).
// Both ranks' thread 0 end in a barrier at 3.0.
std::vector<VRank> serialized_pair() {
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.01, 1, 1);
  r[0].recv(1.01, 2.01, 1, 2);  // Late Sender 0.99 s (rank 1's send at 2.0)
  r[1].region(0.0, 2.0, kSolve);
  r[1].send(2.0, 2.01, 0, 2);
  r[1].on(1).recv(0.2, 1.01, 0, 1);  // Late Sender 0.8 s on thread 1
  r[1].on(1).leave(3.0);
  r[1].on(0);
  for (auto& v : r) v.coll(3.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(3.1);
  return r;
}

}  // namespace

TEST_CASE("MPI calls of several threads of a rank are analyzed, each on its thread", "[locations]") {
  auto r = serialized_pair();
  const auto res = replay(r);
  // Wait states on the thread that waited.
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.8).margin(1e-9));
  CHECK(res[1].get_at(0, Metric::mpi_latesender) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get_at(0, Metric::mpi_latesender) == Approx(0.99).margin(1e-9));
  // Thread 1's wait: rank 0's kWork (1 s) exceeds thread 1's 0.2 s before
  // its receive only in kWork: all 0.8 s are its cost.
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(0.8).margin(1e-9));
  // Rank 0's wait: its interval since the last point it shares with rank 1
  // (its send at 1.0) holds 0.01 s of MPI_Send; rank 1's holds kSolve from
  // 1.01 (the end of the wait of thread 1's receive) to 2.0, on thread 0
  // (whose call ends the interval): 0.99 s of kSolve explain 0.99 s.
  CHECK(res[1].get_at(0, Metric::delay_latesender, kSolve) == Approx(0.99).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::delay) == Approx(0.0).margin(1e-12));
  // Every wait is explained: delay costs sum to the waiting.
  CHECK(res[0].get(Metric::delay) + res[1].get_at(0, Metric::delay) + res[1].get_at(1, Metric::delay) ==
        Approx(0.8 + 0.99).margin(1e-9));
  // The critical path, backwards: rank 0 from the barrier (3.1) to the end
  // of its wait (2.0); rank 1's send (thread 0) back to the end of thread
  // 1's wait (1.0): kSolve on thread 0, the thread of the call that ends
  // the segment; rank 0's kWork back to 0.  It tiles the window: 3.1 s.
  CHECK(res[1].get_at(0, Metric::critical_path, kSolve) == Approx(1.0).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::critical_path) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(1.0).margin(1e-9));
  CHECK(res[0].get(Metric::critical_path) + res[1].get_at(0, Metric::critical_path) == Approx(3.1).margin(1e-9));
  // One window of rank 1 merged the calls of two threads.
  CHECK(res[1].facts[0].threaded_mpi_windows == 1);
  CHECK(res[0].facts[0].threaded_mpi_windows == 0);
}

TEST_CASE("a rank whose MPI calls all come from another thread is analyzed there", "[locations]") {
  // Rank 1's thread 0 only computes; thread 1 makes every MPI call of the
  // window (no merge needed: its window is the MPI view).
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.01, 1, 1);
  r[1].region(0.0, 2.0, kSolve);
  r[1].on(1).recv(0.4, 1.01, 0, 1);  // Late Sender 0.6 s on thread 1
  r[1].on(1).leave(2.0);
  r[1].on(0);
  for (auto& v : r) v.leave(2.0);
  const auto res = replay(r);
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.6).margin(1e-9));
  CHECK(res[1].get_at(0, Metric::mpi_latesender) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get(Metric::delay_latesender, kWork) == Approx(0.6).margin(1e-9));
  CHECK(res[1].facts[0].threaded_mpi_windows == 0);
  // The time of both threads is there.
  CHECK(res[1].get_at(0, Metric::time, kSolve) == Approx(2.0).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::time, rt::kRegion_MPI_Recv) == Approx(0.61).margin(1e-9));
}

TEST_CASE("threads' MPI calls across epochs: the same values as in one epoch", "[locations][epochs]") {
  auto one = serialized_pair();
  const auto whole = replay(one);
  auto split = serialized_pair();
  // A synchronizing cut after a barrier at 1.5 on thread 0 of both ranks
  // would reorder the program; a requested cut at 1.5 does not.
  for (auto& v : split) v.requested_cut_at(1.5);
  const auto parts = replay(split);
  // Rank 1's MPI calls come from thread 1 in the first window and from
  // thread 0 in the second: the view moves between threads across the cut.
  REQUIRE(parts[1].facts.size() == 2);
  CHECK(parts[1].facts[0].threaded_mpi_windows + parts[1].facts[1].threaded_mpi_windows == 0);
  double path_whole = 0, path_parts = 0;
  for (int rank = 0; rank < 2; ++rank) {
    for (int l = 0; l < 2; ++l) {
      path_whole += whole[static_cast<std::size_t>(rank)].get_at(l, Metric::critical_path);
      path_parts += parts[static_cast<std::size_t>(rank)].get_at(l, Metric::critical_path);
    }
  }
  CHECK(path_parts == Approx(path_whole).margin(1e-9));
  for (int rank = 0; rank < 2; ++rank) {
    for (int l = 0; l < (rank == 1 ? 2 : 1); ++l) {
      const auto& a = whole[static_cast<std::size_t>(rank)];
      const auto& b = parts[static_cast<std::size_t>(rank)];
      CHECK(b.get_at(l, Metric::mpi_latesender) == Approx(a.get_at(l, Metric::mpi_latesender)).margin(1e-9));
      CHECK(b.get_at(l, Metric::delay_latesender) == Approx(a.get_at(l, Metric::delay_latesender)).margin(1e-9));
      CHECK(b.get_at(l, Metric::time) == Approx(a.get_at(l, Metric::time)).margin(1e-9));
    }
  }
}

TEST_CASE("a clock correction of merged MPI calls moves the rest of the thread with them", "[locations][clock]") {
  // As "a receive before its send moves to the send" (test_clock_condition),
  // on thread 1 of rank 1, whose thread 0 also makes an MPI call (a barrier
  // at 1.8 on both ranks): the view merges the two threads.  Thread 1's
  // receive seems to end at 0.9998, 0.2 ms before rank 0's send: it moves to
  // 1.0.  Thread 1's later events keep that shift (no later MPI call of the
  // thread lets it decay), so its kWork still lasts 0.5 s and its time is
  // its recorded 2.0 s plus 0.2 ms (without moving them, kWork's enter at
  // 0.9999 lies before the receive's corrected leave at 1.0: kWork loses
  // 0.1 ms and the thread 0.2 ms).
  auto r = make_ranks(2);
  r[0].region(0.0, 1.0, kWork);
  r[0].send(1.0, 1.0001, 1);
  r[1].region(0.0, 1.8, kSolve);
  r[1].on(1).recv(0.1, 0.9998, 0);
  r[1].on(1).region(0.9999, 1.4999, kWork);
  r[1].on(1).leave(2.0);
  r[1].on(0);
  for (auto& v : r) v.coll(1.8, 1.9, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(2.0);
  const auto res = replay(r);
  CHECK(res[1].facts[0].threaded_mpi_windows == 1);
  CHECK(res[1].facts[0].clock_violations == 1);
  CHECK(res[1].facts[0].clock_violations_corrected == 1);
  CHECK(res[1].get_at(1, Metric::mpi_latesender) == Approx(0.9).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::time, kWork) == Approx(0.5).margin(1e-9));
  CHECK(res[1].get_at(1, Metric::time) == Approx(2.0002).margin(1e-9));
  CHECK(res[1].get_at(0, Metric::time) == Approx(2.0).margin(1e-9));
}
