// RMA patterns (seed 001) on hand-built streams: a window is a communicator
// of its own (runtime/comms.hpp), its creation, fences and free are
// collective instances on it, its operations Rma events.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {
// A window over all ranks of `r` (gid 500), registered on every rank.
std::uint16_t add_window(std::vector<VRank>& r) {
  std::vector<int> all;
  for (int i = 0; i < static_cast<int>(r.size()); ++i) all.push_back(i);
  std::uint16_t id = 0;
  for (auto& v : r) {
    id = v.add_comm(500, all);
    v.defs.comms[id].window = true;  // (as CommRegistry::add_window marks it)
  }
  return id;
}
}  // namespace

TEST_CASE("wait at create and wait at free: everyone waits for the last to enter", "[rma]") {
  // Creation entered at 1, 2, 3 (left at 3.1); free entered at 6, 5, 4 (left at 6.1).
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  for (int i = 0; i < 3; ++i) {
    r[i].coll(1.0 + i, 3.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
    r[i].coll(6.0 - i, 6.1, rt::kRegion_MPI_Win_free, -1, 0, 0, win);
    r[i].leave(7.0);
  }
  auto res = replay(r);
  for (int i = 0; i < 3; ++i) {
    CHECK(res[i].get(Metric::mpi_rma_wait_at_create) == Approx(2.0 - i).margin(1e-9));
    CHECK(res[i].get(Metric::mpi_rma_wait_at_free) == Approx(static_cast<double>(i)).margin(1e-9));
    CHECK(res[i].get(Metric::mpi_mgmt_win) == Approx((3.1 - (1.0 + i)) + (6.1 - (6.0 - i))));
    CHECK(res[i].get(Metric::syncs_coll) == 0.0);  // not collective communication
  }
}

TEST_CASE("wait at fence only where the fence synchronized", "[rma][fence]") {
  // Fence 1 synchronizes: entered at 1, 2, 4, every leave after 4.
  // Fence 2 does not: rank 0 leaves at 5.5 before rank 2 enters at 6
  // (an implementation that knew no access was pending): nobody waited.
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  const double enter1[3] = {1.0, 2.0, 4.0};
  const double enter2[3] = {5.0, 5.2, 6.0};
  const double leave2[3] = {5.5, 6.1, 6.1};
  for (int i = 0; i < 3; ++i) {
    r[i].coll(enter1[i], 4.2, rt::kRegion_MPI_Win_fence, -1, 0, 0, win);
    r[i].coll(enter2[i], leave2[i], rt::kRegion_MPI_Win_fence, -1, 0, 0, win);
    r[i].leave(7.0);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_wait_at_fence) == Approx(3.0));
  CHECK(res[1].get(Metric::mpi_rma_wait_at_fence) == Approx(2.0));
  CHECK(res[2].get(Metric::mpi_rma_wait_at_fence) == 0.0);
  // Fence time is active-target synchronization time.
  CHECK(res[0].get(Metric::mpi_rma_sync_active) == Approx((4.2 - 1.0) + (5.5 - 5.0)));
  CHECK(res[0].get(Metric::mpi_rma_synchronization) == Approx((4.2 - 1.0) + (5.5 - 5.0)));
}

TEST_CASE("fence delay costs land on the last rank's extra work", "[rma][fence][delay]") {
  // Ranks work 1, 2, 3, 4 s in f, then fence: rank 3 causes 3 + 2 + 1 s.
  // Nothing is charged to the other delay kinds, and the critical path
  // runs through rank 3's work.
  auto r = make_ranks(4);
  const std::uint16_t win = add_window(r);
  for (int i = 0; i < 4; ++i) {
    r[i].coll(0.0, 0.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
    r[i].region(0.1, 1.1 + i, kWork);
    r[i].coll(1.1 + i, 4.2, rt::kRegion_MPI_Win_fence, -1, 0, 0, win);
    r[i].leave(5.0);
  }
  auto res = replay(r);
  CHECK(res[3].get(Metric::delay_rma_fence, kWork) == Approx(6.0));
  CHECK(res[3].get(Metric::delay_barrier) == 0.0);
  CHECK(res[3].get(Metric::delay_rma) == Approx(6.0));
  for (int i = 0; i < 3; ++i) CHECK(res[i].get(Metric::delay) == Approx(0.0).margin(1e-12));
  CHECK(res[3].get(Metric::critical_path, kWork) == Approx(4.0));
  for (int i = 0; i < 3; ++i) CHECK(res[i].get(Metric::critical_path, kWork) == Approx(0.0).margin(1e-9));
}

TEST_CASE("RMA operation counts and bytes on the origin", "[rma][counts]") {
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  auto op = [&](VRank& v, double t, std::uint32_t region, EventKind k, std::uint64_t out, std::uint64_t in) {
    v.enter(t, region);
    v.events.push_back(Event::rma(k, ns(t + 0.1), win, 1, out, in));
    v.leave(t + 0.1);
  };
  op(r[0], 1.0, rt::kRegion_MPI_Put, EventKind::RmaPut, 64, 0);
  op(r[0], 2.0, rt::kRegion_MPI_Accumulate, EventKind::RmaPut, 32, 0);
  op(r[0], 3.0, rt::kRegion_MPI_Get, EventKind::RmaGet, 0, 16);
  op(r[0], 4.0, rt::kRegion_MPI_Compare_and_swap, EventKind::RmaAtomic, 8, 8);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::comms_rma_puts) == 2.0);
  CHECK(res[0].get(Metric::comms_rma_gets) == 1.0);
  CHECK(res[0].get(Metric::comms_rma_atomics) == 1.0);
  CHECK(res[0].get(Metric::comms_rma) == 4.0);
  CHECK(res[0].get(Metric::bytes_put) == 104.0);
  CHECK(res[0].get(Metric::bytes_get) == 24.0);
  CHECK(res[0].get(Metric::bytes_rma) == 128.0);
  CHECK(res[0].get(Metric::mpi_rma_communication) == Approx(0.4));
  CHECK(res[1].get(Metric::comms_rma) == 0.0);  // counted on the origin only
}

namespace {
// Origin `v` issues one RMA operation on `target` (comm rank) from t to t + 0.1.
void rma_op(VRank& v, std::uint16_t win, double t, int target, std::uint32_t region = rt::kRegion_MPI_Put,
            EventKind k = EventKind::RmaPut) {
  v.enter(t, region);
  v.events.push_back(Event::rma(k, ns(t + 0.1), win, target, 8, 0));
  v.leave(t + 0.1);
}
// A fence; `no_precede`: MPI_MODE_NOPRECEDE (closes no access epoch).
void fence(VRank& v, std::uint16_t win, double t0, double t1, bool no_precede = false) {
  v.enter(t0, rt::kRegion_MPI_Win_fence);
  Event e = Event::collective_end(ns(t1), win, -1, 0, 0);
  e.flags = no_precede ? evflag::kNoPrecede : 0;
  v.events.push_back(e);
  v.leave(t1);
}
}  // namespace

TEST_CASE("early fence: the target waits for the latest access to its window", "[rma][fence]") {
  // Rank 0 puts to rank 1 (leaves at 0.6), rank 2 gets from rank 1 (leaves
  // at 2.1).  Fences entered at 0.7, 1.0, 2.2, left at 2.3: rank 1 waits
  // 1.2 s, 1.1 s of it for rank 2's get.  Ranks 0 and 2 were not accessed.
  // Pairwise synchronizations: 3 per rank; unneeded 3, 1 (rank 1 was
  // accessed by 0 and 2), 3.
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  for (auto& v : r) fence(v, win, 0.0, 0.1, true);
  rma_op(r[0], win, 0.5, 1);
  rma_op(r[2], win, 2.0, 1, rt::kRegion_MPI_Get, EventKind::RmaGet);
  const double enter[3] = {0.7, 1.0, 2.2};
  for (int i = 0; i < 3; ++i) {
    fence(r[i], win, enter[i], 2.3);
    r[i].leave(3.0);
  }
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_rma_wait_at_fence) == Approx(1.2));
  CHECK(res[1].get(Metric::mpi_rma_early_fence) == Approx(1.1));
  CHECK(res[0].get(Metric::mpi_rma_early_fence) == 0.0);
  CHECK(res[2].get(Metric::mpi_rma_early_fence) == 0.0);
  // Delay costs, on rank 2 (last to enter): its interval since the opening
  // fence (0.1-2.2) holds 2.0 s outside MPI and its 0.1 s get; rank 0's
  // 0.5 s outside MPI and its put, rank 1's 0.9 s.  Rank 0's 1.5 s wait is
  // all explained (excess 1.5 + 0.1), rank 1's 1.2 s too (excess 1.1 +
  // 0.1): 11/12 of it, its Early Fence share, as Early Fence.
  CHECK(res[2].get(Metric::delay_rma_earlyfence) == Approx(1.1));
  CHECK(res[2].get(Metric::delay_rma_fence) == Approx(1.5 + 0.1));
  CHECK(res[0].get(Metric::delay) + res[1].get(Metric::delay) == Approx(0.0).margin(1e-12));
  const double unneeded[3] = {3.0, 1.0, 3.0};
  for (int i = 0; i < 3; ++i) {
    CHECK(res[i].get(Metric::mpi_rma_pairsync_count) == 3.0);  // the opening fence counts none
    CHECK(res[i].get(Metric::mpi_rma_pairsync_unneeded_count) == unneeded[i]);
    CHECK(res[i].get(Metric::syncs_rma) == 3.0);
  }
}

TEST_CASE("accesses before a requested cut count at the fence after it", "[rma][fence][cuts]") {
  // Rank 0 puts to rank 1 at 0.5-0.6; the ranks cut at 0.65; the fence
  // that closes the epoch comes after the cut: rank 1 still counts rank 0
  // as an origin (unneeded 2 of 3, not 3).
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  for (auto& v : r) fence(v, win, 0.0, 0.1, true);
  rma_op(r[0], win, 0.5, 1);
  for (auto& v : r) v.requested_cut(0.65);
  for (int i = 0; i < 3; ++i) {
    fence(r[i], win, 1.0 + 0.1 * i, 1.3);
    r[i].leave(2.0);
  }
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_wait_at_fence) == Approx(0.2));
  CHECK(res[0].facts.size() == 2);
  CHECK(res[0].facts.back().split_collectives == 0);
  CHECK(res[1].get(Metric::mpi_rma_pairsync_unneeded_count) == 2.0);
  CHECK(res[1].get(Metric::mpi_rma_pairsync_count) == 3.0);
  CHECK(res[0].get(Metric::mpi_rma_pairsync_unneeded_count) == 3.0);
}

namespace {
// A post or start call with `group` (ranks in the window), from t0 to t1.
void epoch_call(VRank& v, std::uint16_t win, double t0, double t1, EventKind k, std::uint32_t group = 0) {
  const std::uint32_t region = k == EventKind::WinPost       ? rt::kRegion_MPI_Win_post
                               : k == EventKind::WinStart    ? rt::kRegion_MPI_Win_start
                               : k == EventKind::WinComplete ? rt::kRegion_MPI_Win_complete
                                                             : rt::kRegion_MPI_Win_wait;
  v.enter(t0, region);
  v.events.push_back(Event::rma_sync(k, ns(k == EventKind::WinPost ? t0 : t1), win, group));  // (as recorded: completes_call)
  v.leave(t1);
}
// Groups every rank knows by the same id (as the runtime interns them).
std::uint32_t add_group(std::vector<VRank>& r, const std::vector<int>& members) {
  std::uint32_t id = 0;
  for (auto& v : r) {
    id = static_cast<std::uint32_t>(v.defs.groups.size());
    v.defs.groups.push_back(members);
  }
  return id;
}
}  // namespace

TEST_CASE("late post, early wait and late complete in post/start/complete/wait", "[rma][gats]") {
  // Rank 1 (target) posts late, at 2.0, and waits from 2.1 to 4.0.  Rank 0
  // (origin) starts at 1.0; its start returns at once, its put blocks from
  // 1.5 until the post (2.0) and leaves at 2.1 (Late Post in the operation:
  // 0.5 s), then it works and enters MPI_Win_complete at 3.9: the target
  // waited 3.9 - 2.1 = 1.8 s (Early Wait), 1.8 of it after the put had left
  // at 2.1 (Late Complete).  Rank 2 (origin too) starts at 1.0 and blocks in
  // MPI_Win_start until the post (Late Post in the synchronization: 1.0 s),
  // issues nothing and completes at 2.2; its empty epoch is an unneeded
  // pairwise synchronization.
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  const std::uint32_t origins = add_group(r, {0, 2}), target = add_group(r, {1});
  epoch_call(r[1], win, 2.0, 2.05, EventKind::WinPost, origins);
  epoch_call(r[1], win, 2.1, 4.0, EventKind::WinWait);
  epoch_call(r[0], win, 1.0, 1.01, EventKind::WinStart, target);
  r[0].enter(1.5, rt::kRegion_MPI_Put);
  r[0].events.push_back(Event::rma(EventKind::RmaPut, ns(2.1), win, 1, 8, 0));
  r[0].leave(2.1);
  epoch_call(r[0], win, 3.9, 3.95, EventKind::WinComplete);
  epoch_call(r[2], win, 1.0, 2.01, EventKind::WinStart, target);
  epoch_call(r[2], win, 2.2, 2.25, EventKind::WinComplete);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_comm_late_post) == Approx(0.5));
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == 0.0);
  CHECK(res[2].get(Metric::mpi_rma_sync_late_post) == Approx(1.0));
  CHECK(res[2].get(Metric::mpi_rma_sync_late_post, rt::kRegion_MPI_Win_start) == Approx(1.0));
  CHECK(res[1].get(Metric::mpi_rma_early_wait) == Approx(1.8));
  CHECK(res[1].get(Metric::mpi_rma_late_complete) == Approx(1.8));
  CHECK(res[0].get(Metric::mpi_rma_pairsync_count) == 1.0);
  CHECK(res[0].get(Metric::mpi_rma_pairsync_unneeded_count) == 0.0);
  CHECK(res[2].get(Metric::mpi_rma_pairsync_count) == 1.0);
  CHECK(res[2].get(Metric::mpi_rma_pairsync_unneeded_count) == 1.0);
}

TEST_CASE("post/start/complete/wait epochs pair across requested cuts", "[rma][gats][cuts]") {
  // Two epochs of the same pair.  The first: the target posts at 1.0 in
  // window 0 (cut at 1.5), the origin starts at 1.6 and enters
  // MPI_Win_complete at 2.3 in window 1, while the target waits from 2.0:
  // Early Wait 0.3 s (all of it Late Complete: no operation).  The second:
  // the origin starts at 3.0 and blocks in MPI_Win_complete from 3.1 until
  // the target posts at 3.6: Late Post 0.5 s in MPI_Win_complete; the
  // target waits only from 3.8.  Both epochs issued nothing: 2 unneeded
  // pairwise synchronizations.  (Without the carry across the cut, the
  // first epoch's post would be lost and the pairs shifted.)
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1});
  epoch_call(r[1], win, 1.0, 1.05, EventKind::WinPost, g0);
  for (auto& v : r) v.requested_cut(1.5);
  epoch_call(r[1], win, 2.0, 2.5, EventKind::WinWait);
  epoch_call(r[0], win, 1.6, 1.65, EventKind::WinStart, g1);
  epoch_call(r[0], win, 2.3, 2.35, EventKind::WinComplete);
  epoch_call(r[0], win, 3.0, 3.05, EventKind::WinStart, g1);
  epoch_call(r[0], win, 3.1, 4.0, EventKind::WinComplete);  // blocks until the post at 3.6
  epoch_call(r[1], win, 3.6, 3.65, EventKind::WinPost, g0);
  epoch_call(r[1], win, 3.8, 4.2, EventKind::WinWait);     // complete entered at 3.1: no early wait
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_rma_early_wait) == Approx(0.3));
  CHECK(res[1].get(Metric::mpi_rma_late_complete) == Approx(0.3));
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == Approx(0.5));
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post, rt::kRegion_MPI_Win_complete) == Approx(0.5));
  CHECK(res[0].get(Metric::mpi_rma_pairsync_unneeded_count) == 2.0);
}

TEST_CASE("out-of-order post/start/complete/wait is counted and left out", "[rma][gats][errors]") {
  // Rank 0 completes without a start and starts twice; rank 1 waits
  // without a post.  Nothing pairs, nothing is charged, three errors and the
  // second start's epoch (never completed) are all that is left.
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g1 = add_group(r, {1});
  epoch_call(r[0], win, 1.0, 1.1, EventKind::WinComplete);
  epoch_call(r[0], win, 2.0, 2.1, EventKind::WinStart, g1);
  epoch_call(r[0], win, 3.0, 3.1, EventKind::WinStart, g1);
  epoch_call(r[1], win, 1.0, 4.0, EventKind::WinWait);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].facts.back().rma_sync_errors == 2);
  CHECK(res[1].facts.back().rma_sync_errors == 1);
  for (int i = 0; i < 2; ++i) {
    CHECK(res[i].get(Metric::mpi_rma_early_wait) == 0.0);
    CHECK(res[i].get(Metric::mpi_rma_sync_late_post) == 0.0);
    CHECK(res[i].get(Metric::mpi_rma_pairsync_count) == 0.0);
  }
}

namespace {
// A lock, unlock or flush call on `target` (-1: all) from t0 to t1.
void lock_call(VRank& v, std::uint16_t win, double t0, double t1, EventKind k, int target, bool exclusive = true) {
  const std::uint32_t region = k == EventKind::WinLock     ? rt::kRegion_MPI_Win_lock
                               : k == EventKind::WinUnlock ? rt::kRegion_MPI_Win_unlock
                                                           : rt::kRegion_MPI_Win_flush;
  v.enter(t0, region);
  v.events.push_back(Event::rma_sync(k, ns(t1), win, 0, target, exclusive ? evflag::kExclusiveLock : 0));
  v.leave(t1);
}
}  // namespace

TEST_CASE("lock competition and wait for progress", "[rma][locks]") {
  // Target rank 0.  Rank 1 locks it exclusively at 1.0-1.01 and unlocks at
  // 2.0-2.05 (release 2.05).  Rank 2 asks at 1.5 and gets the lock at
  // 2.05: competition 0.55 s in its lock.  A shared lock of rank 3 (1.2)
  // conflicts with rank 1's exclusive one too; it is acquired lazily: its
  // unlock (1.3-2.1) waits until rank 1's release at 2.05: 0.75 s.  (Rank
  // 2's release at 2.15 falls after rank 3's unlock left: no wait.)  Later
  // rank 1 locks again at 3.0 while the target computes until 4.0 without
  // MPI; its unlock (3.2-4.0) waits for the target's barrier at 4.0: wait
  // for progress 0.8 s.
  auto r = make_ranks(4);
  const std::uint16_t win = add_window(r);
  lock_call(r[1], win, 1.0, 1.01, EventKind::WinLock, 0);
  lock_call(r[1], win, 2.0, 2.05, EventKind::WinUnlock, 0);
  lock_call(r[2], win, 1.5, 2.05, EventKind::WinLock, 0);
  lock_call(r[2], win, 2.1, 2.15, EventKind::WinUnlock, 0);
  lock_call(r[3], win, 1.2, 1.21, EventKind::WinLock, 0, false);
  lock_call(r[3], win, 1.3, 2.1, EventKind::WinUnlock, 0);
  lock_call(r[1], win, 3.0, 3.01, EventKind::WinLock, 0);
  lock_call(r[1], win, 3.2, 4.0, EventKind::WinUnlock, 0);
  r[0].region(2.5, 4.0, kWork);
  for (int i = 0; i < 4; ++i) r[i].coll(4.0 + 0.01 * i, 4.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[2].get(Metric::mpi_rma_sync_lock_competition) == Approx(0.55));
  CHECK(res[2].get(Metric::mpi_rma_sync_lock_competition, rt::kRegion_MPI_Win_lock) == Approx(0.55));
  CHECK(res[3].get(Metric::mpi_rma_sync_lock_competition) == Approx(0.75));
  CHECK(res[1].get(Metric::mpi_rma_sync_lock_competition) == 0.0);
  CHECK(res[1].get(Metric::mpi_rma_wait_for_progress) == Approx(0.8));
  CHECK(res[2].get(Metric::mpi_rma_wait_for_progress) == 0.0);
}

TEST_CASE("post/start/complete/wait epochs that wait for their partners across a round", "[rma][gats][cuts]") {
  // Two pairs, a requested cut at 1.0.  Ranks 0 -> 1 lie in window 0: rank
  // 1 posts at 0.2 and waits 0.3-0.4, rank 0 starts at 0.5 and completes at
  // 0.6: Early Wait min(0.6, 0.4) - 0.3 = 0.1 s.  Ranks 2 -> 3: rank 3 posts
  // and waits the same way in window 0, but rank 2 starts at 1.2 and
  // completes at 1.3, in window 1: rank 3's exposure ended a round before
  // its origin's record came and is kept (Early Wait 0.1 s, found a round
  // later); rank 2's post record came a round before its epoch ended.  Each
  // origin's epoch counts one pairwise synchronization, unneeded.
  auto r = make_ranks(4);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1}), g2 = add_group(r, {2}),
                      g3 = add_group(r, {3});
  epoch_call(r[1], win, 0.2, 0.21, EventKind::WinPost, g0);
  epoch_call(r[1], win, 0.3, 0.4, EventKind::WinWait);
  epoch_call(r[0], win, 0.5, 0.51, EventKind::WinStart, g1);
  epoch_call(r[0], win, 0.6, 0.61, EventKind::WinComplete);
  epoch_call(r[3], win, 0.2, 0.21, EventKind::WinPost, g2);
  epoch_call(r[3], win, 0.3, 0.4, EventKind::WinWait);
  for (auto& v : r) v.requested_cut(1.0);
  epoch_call(r[2], win, 1.2, 1.21, EventKind::WinStart, g3);
  epoch_call(r[2], win, 1.3, 1.31, EventKind::WinComplete);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[3].get(Metric::mpi_rma_early_wait) == Approx(0.1));
  CHECK(res[2].get(Metric::mpi_rma_pairsync_count) == 1.0);
  CHECK(res[2].get(Metric::mpi_rma_pairsync_unneeded_count) == 1.0);
  CHECK(res[0].get(Metric::mpi_rma_pairsync_count) == 1.0);
  CHECK(res[1].get(Metric::mpi_rma_early_wait) == Approx(0.1));
  CHECK(res[0].facts.back().rma_sync_errors + res[1].facts.back().rma_sync_errors == 0);
  // Both waits returned before their origin entered MPI_Win_complete (as
  // clocks that disagree can show): found, not traced, nothing charged to
  // the origins.  (Rank 3's cause lies in window 1 besides.)
  CHECK(res[3].facts.back().unexplained_rma_waits == 1);
  CHECK(res[1].facts.front().unexplained_rma_waits == 1);
  CHECK(res[3].facts.back().unexplained_rma_wait_seconds == Approx(0.1));
  CHECK(res[1].facts.front().unexplained_rma_wait_seconds == Approx(0.1));
  CHECK(res[0].get(Metric::delay_rma) == 0.0);
  CHECK(res[2].get(Metric::delay_rma) == 0.0);
}

TEST_CASE("a start that blocks across a requested cut keeps its enter", "[rma][gats][cuts]") {
  // Rank 0 enters MPI_Win_start at 0.9 and leaves at 1.5, after a cut at
  // 1.0; rank 1 posts at 1.4: Late Post 0.5 s in the start (its enter comes
  // from the window before, its leave and event from this one).
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1});
  r[0].enter(0.9, rt::kRegion_MPI_Win_start);
  for (auto& v : r) v.requested_cut(1.0);
  r[0].events.push_back(Event::rma_sync(EventKind::WinStart, ns(1.5), win, g1));
  r[0].leave(1.5);
  epoch_call(r[0], win, 1.6, 1.65, EventKind::WinComplete);
  epoch_call(r[1], win, 1.4, 1.41, EventKind::WinPost, g0);
  epoch_call(r[1], win, 1.5, 1.7, EventKind::WinWait);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == Approx(0.5));
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post, rt::kRegion_MPI_Win_start) == Approx(0.5));
  CHECK(res[1].get(Metric::mpi_rma_early_wait) == Approx(0.1));
}

// Root causes through RMA synchronizations: each wait is a pair of calls in
// the backward replay (PairSyncFinding), explained like a message.
TEST_CASE("late post: delay costs on the target's extra work, the path through its post", "[rma][gats][delay]") {
  // Window created 0.0-0.1 by both.  Origin 0 works 0.1-1.0 and blocks in
  // MPI_Win_start 1.0-2.0 until target 1 posts at 2.0 after working
  // 0.1-2.0: Late Post 1.0 s, caused by the target's 0.9 s of extra work
  // (d = 1.9 - 0.9 s of work; the scale min(1.0 / 1.0, 1) = 1).  The
  // origin then puts, completes, works 2.15-3.0 and enters the closing
  // barrier last (3.0): the path runs back through its work (0.85 s), over
  // its Late Post to the target's post, and through the target's work
  // (1.9 s).
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1});
  for (auto& v : r) v.coll(0.0, 0.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
  r[1].region(0.1, 2.0, kWork);
  epoch_call(r[1], win, 2.0, 2.05, EventKind::WinPost, g0);
  epoch_call(r[1], win, 2.1, 2.2, EventKind::WinWait);
  r[1].coll(2.5, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[0].region(0.1, 1.0, kWork);
  epoch_call(r[0], win, 1.0, 2.0, EventKind::WinStart, g1);
  rma_op(r[0], win, 2.0, 1);
  epoch_call(r[0], win, 2.1, 2.15, EventKind::WinComplete);
  r[0].region(2.15, 3.0, kWork);
  r[0].coll(3.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == Approx(1.0));
  CHECK(res[1].get(Metric::delay_rma_latepost, kWork) == Approx(1.0));
  CHECK(res[1].get(Metric::delay_rma_latepost) == Approx(1.0));
  CHECK(res[0].get(Metric::delay_rma_latepost) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(0.85));
  CHECK(res[1].get(Metric::critical_path, kWork) == Approx(1.9));
  // The path tiles the run: 0.1 (create) + 1.9 + 0.05 + 0.1 (the put from
  // 2.0) + 0.05 (complete) + 0.85 + 0.1 (barrier).
  CHECK(res[0].get(Metric::critical_path) + res[1].get(Metric::critical_path) == Approx(3.1));
}

TEST_CASE("early wait: delay costs on the last origin, the Late Complete share of its own kind", "[rma][gats][delay]") {
  // Target 1 posts at 0.2 and waits 0.3-2.0; origin 0 starts at 0.25, puts
  // 0.3-0.4, works 0.4-1.9 and enters MPI_Win_complete at 1.9: Early Wait
  // 1.9 - 0.3 = 1.6 s, of which Late Complete 1.9 - 0.4 = 1.5 s.  The
  // origin's excess over the target since the window's creation is its
  // work, put and start (1.61 s), so all 1.6 s are explained: 1.5 s as Late
  // Complete, 0.1 s as Early Wait.  The target works 2.0-3.0 and enters
  // the closing barrier last: the path holds the target's work (1.0 s), the
  // tail of its wait after the complete began (0.1 s), and the origin's
  // work (1.5 s).
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1});
  for (auto& v : r) v.coll(0.0, 0.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
  epoch_call(r[1], win, 0.2, 0.21, EventKind::WinPost, g0);
  epoch_call(r[1], win, 0.3, 2.0, EventKind::WinWait);
  r[1].region(2.0, 3.0, kWork);
  r[1].coll(3.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  epoch_call(r[0], win, 0.25, 0.26, EventKind::WinStart, g1);
  rma_op(r[0], win, 0.3, 1);
  r[0].region(0.4, 1.9, kWork);
  epoch_call(r[0], win, 1.9, 1.95, EventKind::WinComplete);
  r[0].coll(2.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[1].get(Metric::mpi_rma_early_wait) == Approx(1.6));
  CHECK(res[1].get(Metric::mpi_rma_late_complete) == Approx(1.5));
  CHECK(res[0].get(Metric::delay_rma_latecomplete) == Approx(1.5));
  CHECK(res[0].get(Metric::delay_rma_earlywait) == Approx(0.1));
  CHECK(res[0].get(Metric::delay_rma_latecomplete, kWork) == Approx(1.5 * 1.6 / 1.61 * 1.5 / 1.6));
  CHECK(res[1].get(Metric::delay_rma) == Approx(0.0).margin(1e-12));
  CHECK(res[1].get(Metric::critical_path, kWork) == Approx(1.0));
  CHECK(res[1].get(Metric::critical_path, rt::kRegion_MPI_Win_wait) == Approx(0.1));
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(1.5));
  CHECK(res[0].get(Metric::critical_path) + res[1].get(Metric::critical_path) == Approx(3.1));
}

TEST_CASE("lock competition: delay costs on the holder's work while it held the lock", "[rma][locks][delay]") {
  // Target 0 computes until the closing barrier.  Origin 1 locks it
  // exclusively at 0.2, works 0.21-2.0 and unlocks 2.0-2.05; origin 2 asks
  // at 0.5 and gets the lock at 2.05: competition 1.55 s, until origin 1's
  // unlock returned.  Since the window's creation, origin 1 spent 1.79 s
  // working, 0.01 s locking and 0.05 s unlocking beyond origin 2 (whose
  // 0.4 s outside MPI match origin 1's 0.1 s and more): all 1.55 s are
  // explained, 1.55 * 1.79 / 1.85 of it by the work.
  // Origin 2 works 2.15-3.0 and enters the barrier last: the path runs
  // back through that work (0.85 s), over its lock's wait to origin 1's
  // unlock, and through origin 1's work (1.79 s).
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  for (auto& v : r) v.coll(0.0, 0.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
  lock_call(r[1], win, 0.2, 0.21, EventKind::WinLock, 0);
  r[1].region(0.21, 2.0, kWork);
  lock_call(r[1], win, 2.0, 2.05, EventKind::WinUnlock, 0);
  lock_call(r[2], win, 0.5, 2.05, EventKind::WinLock, 0);
  lock_call(r[2], win, 2.1, 2.15, EventKind::WinUnlock, 0);
  r[2].region(2.15, 3.0, kWork);
  for (int i = 0; i < 3; ++i) r[i].coll(i == 2 ? 3.0 : 2.5, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[2].get(Metric::mpi_rma_sync_lock_competition) == Approx(1.55));
  CHECK(res[1].get(Metric::delay_rma_lockcompetition) == Approx(1.55));
  CHECK(res[1].get(Metric::delay_rma_lockcompetition, kWork) == Approx(1.55 * 1.79 / 1.85));
  CHECK(res[2].get(Metric::delay_rma) == Approx(0.0).margin(1e-12));
  CHECK(res[0].get(Metric::delay_rma) == Approx(0.0).margin(1e-12));
  CHECK(res[2].get(Metric::critical_path, kWork) == Approx(0.85));
  CHECK(res[1].get(Metric::critical_path, kWork) == Approx(1.79));
}

TEST_CASE("a complete that waited for a post and ended another target's Early Wait", "[rma][gats][delay]") {
  // Origin 0's access epoch has targets 1 and 2.  It starts at 0.1, works
  // 0.11-1.0, and enters MPI_Win_complete at 1.0, which blocks until
  // target 1 posts at 2.0 after working 0.1-2.0 (Late Post 1.0 s, caused
  // by target 1's 1.01 s of extra work).  Target 2 posted at 0.1 and waits
  // from 0.5: its Early Wait ends when origin 0 enters the complete, at 1.0
  // (0.5 s, all of it Late Complete: origin 0 issued nothing to it), and is
  // explained by origin 0's 0.9 s of start and work, not by origin 0's own
  // later wait in the same call.  Target 2 enters the closing barrier last:
  // the path runs back through it to 1.0, over to origin 0's work (0.89 s),
  // and never reaches target 1's work.
  auto r = make_ranks(3);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g12 = add_group(r, {1, 2});
  for (auto& v : r) v.coll(0.0, 0.1, rt::kRegion_MPI_Win_create, -1, 0, 0, win);
  epoch_call(r[0], win, 0.1, 0.11, EventKind::WinStart, g12);
  r[0].region(0.11, 1.0, kWork);
  epoch_call(r[0], win, 1.0, 2.05, EventKind::WinComplete);
  r[0].coll(2.2, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  r[1].region(0.1, 2.0, kWork);
  epoch_call(r[1], win, 2.0, 2.01, EventKind::WinPost, g0);
  epoch_call(r[1], win, 2.02, 2.1, EventKind::WinWait);
  r[1].coll(2.2, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  epoch_call(r[2], win, 0.1, 0.11, EventKind::WinPost, g0);
  epoch_call(r[2], win, 0.5, 2.1, EventKind::WinWait);
  r[2].region(2.1, 3.0, kWork);
  r[2].coll(3.0, 3.1, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == Approx(1.0));
  CHECK(res[2].get(Metric::mpi_rma_early_wait) == Approx(0.5));
  CHECK(res[1].get(Metric::delay_rma_latepost) == Approx(1.0));
  CHECK(res[0].get(Metric::delay_rma_latecomplete) + res[0].get(Metric::delay_rma_earlywait) == Approx(0.5));
  CHECK(res[0].get(Metric::critical_path, kWork) == Approx(0.89));
  CHECK(res[1].get(Metric::critical_path, kWork) == Approx(0.0).margin(1e-9));
  CHECK(res[2].get(Metric::critical_path, kWork) == Approx(0.9));
  double path = 0;
  for (int i = 0; i < 3; ++i) path += res[i].get(Metric::critical_path);
  CHECK(path == Approx(3.1));
}

TEST_CASE("a Late Post whose post lies in the window before is found, not traced", "[rma][gats][cuts][delay]") {
  // Rank 0 enters MPI_Win_start at 0.8; rank 1 posts at 0.9; the ranks cut
  // at 1.0; the start returns at 1.1 (recorded in window 1).  Late Post
  // 0.1 s, whose cause (the post) was walked with window 0: counted in
  // unexplained_rma_waits, no delay costs, and the path stays whole.
  auto r = make_ranks(2);
  const std::uint16_t win = add_window(r);
  const std::uint32_t g0 = add_group(r, {0}), g1 = add_group(r, {1});
  r[1].region(0.0, 0.9, kWork);
  epoch_call(r[1], win, 0.9, 0.91, EventKind::WinPost, g0);
  r[0].enter(0.8, rt::kRegion_MPI_Win_start);
  for (auto& v : r) v.requested_cut(1.0);
  r[0].events.push_back(Event::rma_sync(EventKind::WinStart, ns(1.1), win, g1));
  r[0].leave(1.1);
  epoch_call(r[0], win, 1.2, 1.25, EventKind::WinComplete);
  epoch_call(r[1], win, 1.3, 1.4, EventKind::WinWait);
  for (int i = 0; i < 2; ++i) r[i].coll(1.5, 1.6, rt::kRegion_MPI_Barrier, -1, 0, 0);
  for (auto& v : r) v.leave(2.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_rma_sync_late_post) == Approx(0.1));
  CHECK(res[0].facts.back().unexplained_rma_waits + res[0].facts.front().unexplained_rma_waits == 1);
  // Its 0.1 s are the delay costs it lacks (unexplained_rma_wait_seconds).
  CHECK(res[0].facts.back().unexplained_rma_wait_seconds + res[0].facts.front().unexplained_rma_wait_seconds ==
        Approx(0.1));
  CHECK(res[1].get(Metric::delay_rma) == 0.0);
}
