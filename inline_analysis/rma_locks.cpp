// Passive target (locks), in two rounds of the epoch's RMA exchange
// (rma_accesses.cpp).  An origin keeps each lock epoch (a lock to its unlock,
// per window and target; MPI_Win_lock_all locks every member, shared) with
// the calls in it that may have waited: the lock, flushes, the unlock, and
// the RMA operations that lasted 1 us or more.  At the unlock it sends the
// target one record per call, with the epoch's acquire (lock leave) and
// release (unlock leave) times.  The target, which alone sees every origin's
// epochs on it, answers each call (second round):
//   lock competition  the latest release R of another origin's epoch that
//                     conflicted (either one exclusive), held the lock first
//                     (released before this epoch), held it before the call
//                     left and released it during the call (its
//                     unlock began before the call left and ended after it
//                     began; R = that unlock's leave, at most the call's):
//                     R - call enter;
//   wait for progress for a lock, flush or unlock without competition: the
//                     time the target spent outside MPI (and onlinews' own
//                     work) during the call until it entered MPI again, if
//                     it did before the call left (an MPI library whose locks
//                     need the target's progress, like Open MPI's osc/pt2pt;
//                     a target that calls MPI often makes this short).
// Where a lock blocks depends on the library (eagerly in MPI_Win_lock, or
// lazily in the first operation or the unlock), so, as for Late Post, the
// call during which the release (the target's MPI entry) fell is taken to
// have waited.  Epochs of the round before are kept as target, so that a
// conflict across a cut is found.
#include <algorithm>

#include "engine.hpp"

namespace onlinews::analysis {
namespace {

constexpr std::int64_t kMinOperationNs = 1000;  // operations shorter than this waited for nothing worth sending
// Calls kept per lock epoch before its unlock (bounded memory for a
// lock_all held for the whole run): later flushes and operations of a
// longer epoch are not examined (the lock and the unlock always are).
constexpr std::size_t kMaxCalls = 256;

}  // namespace

void Analyzer::Impl::lock_event(const LocationWindow& w, const LocationState& st, std::size_t i, const CommDef& c,
                                std::map<int, std::vector<RmaRecord>>& out) {
  const Event& e = w.events[i];
  const EventAnnotation& a = st.annot[i];
  const std::int64_t enter = a.enter, leave = a.leave == kOpen ? a.enter : a.leave;
  const LockCall call{a.callpath, enter, leave, payload_of(e.kind) == EventPayload::Rma};
  // The epochs this event belongs to: one target, or every member (-1).
  auto each = [&](auto&& f) {
    if (e.target() >= 0) {
      const int world = c.world_rank_of(e.target());
      if (world >= 0) f(world);
      return;
    }
    for (int r = 0; r < c.size; ++r) f(c.world_rank_of(r));
  };
  switch (e.kind) {
    case EventKind::WinLock:
      each([&](int target) {
        OpenLock& l = open_locks[{e.comm, target}];
        if (!l.calls.empty()) count_rma_error();  // a second lock before the unlock: the first is dropped
        l = OpenLock{c.gid, (e.flags & evflag::kExclusiveLock) != 0, leave, lock_numbers++, {call}};
      });
      return;
    case EventKind::WinFlush:
      each([&](int target) {
        auto it = open_locks.find({e.comm, target});
        if (it != open_locks.end() && it->second.calls.size() < kMaxCalls) it->second.calls.push_back(call);
      });
      return;
    case EventKind::RmaPut:
    case EventKind::RmaGet:
    case EventKind::RmaAtomic: {
      if (leave - enter < kMinOperationNs) return;
      auto it = open_locks.find({e.comm, c.world_rank_of(e.target())});
      if (it != open_locks.end() && it->second.calls.size() < kMaxCalls) it->second.calls.push_back(call);
      return;
    }
    case EventKind::WinUnlock:
      each([&](int target) {
        auto it = open_locks.find({e.comm, target});
        if (it == open_locks.end()) {  // an unlock without a lock (that MPI accepted)
          count_rma_error();
          return;
        }
        OpenLock& l = it->second;
        l.calls.push_back(call);
        for (std::uint32_t k = 0; k < l.calls.size(); ++k) {
          RmaRecord r = RmaRecord::make(RmaRecord::kLockCall, l.gid, l.number, l.acquire, leave);
          r.t4 = enter;
          r.t2 = l.calls[k].enter;
          r.t3 = l.calls[k].leave;
          r.aux = k;
          r.flags = l.exclusive ? RmaRecord::kExclusive : 0;
          out[target].push_back(r);
          asked[{l.number, k}] = l.calls[k];
        }
        open_locks.erase(it);
      });
      return;
    default:
      return;
  }
}

std::map<int, std::vector<RmaRecord>> Analyzer::Impl::answer_lock_calls(
    const LocationWindow& w, const std::map<int, std::vector<RmaRecord>>& got) {
  // This rank's epochs of this round, one per (origin, number).
  for (const auto& [origin, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockCall || r.aux != 0) continue;
      holds[r.window_gid].push_back({origin, (r.flags & RmaRecord::kExclusive) != 0, r.t0, r.t4, r.t1});
    }
  }
  // Where this rank was inside an MPI call or onlinews' own work (either
  // lets MPI progress), in order.
  const LocationState& st = loc(w.location);
  std::vector<std::pair<std::int64_t, std::int64_t>> in_mpi;
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    if (w.events[i].kind != EventKind::Enter) continue;
    const RegionDef* rd = defs.region(w.events[i].region());
    if (rd == nullptr || (rd->kind != RegionKind::Mpi && rd->kind != RegionKind::Tool)) continue;
    const EventAnnotation& a = st.annot[i];
    if (!in_mpi.empty() && a.enter < in_mpi.back().second) continue;  // (nested)
    in_mpi.emplace_back(a.enter, a.leave);
  }
  std::map<int, std::vector<RmaRecord>> answers;
  for (const auto& [origin, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockCall) continue;
      const bool exclusive = (r.flags & RmaRecord::kExclusive) != 0;
      const std::int64_t enter = r.t2, leave = r.t3;
      std::int64_t released = INT64_MIN;
      for (const auto* hs : {&holds[r.window_gid], &holds_before[r.window_gid]}) {
        for (const Hold& h : *hs) {
          if (h.origin == origin || !(h.exclusive || exclusive)) continue;
          // The other epoch held the lock first (it released before this
          // epoch did), held it before this call left, and released it
          // during its unlock, which began before this call left and ended
          // after it began (the lock may be granted before the releasing
          // unlock returns).
          if (h.release < r.t1 && h.acquire < leave && h.release_begin < leave && h.release > enter) {
            released = std::max(released, std::min(h.release, leave));
          }
        }
      }
      RmaRecord answer = RmaRecord::make(RmaRecord::kLockReply, r.window_gid, r.number, 0, 0);
      answer.aux = r.aux;
      if (released > enter) {
        answer.t0 = released - enter;
      } else if (origin != defs.world_rank && leave > enter) {
        // The time the target spent outside MPI during the call until it
        // entered MPI again: from the call's enter, or from the end of the
        // MPI call the target was still in then, to its next MPI entry.
        auto it = std::upper_bound(in_mpi.begin(), in_mpi.end(), enter,
                                   [](std::int64_t t, const auto& iv) { return t < iv.first; });
        std::int64_t from = enter;
        if (it != in_mpi.begin() && std::prev(it)->second > enter) from = std::prev(it)->second;
        if (it != in_mpi.end() && it->first > from && it->first <= leave) answer.t1 = it->first - from;
      }
      if (answer.t0 > 0 || answer.t1 > 0) answers[origin].push_back(answer);
    }
  }
  holds_before = std::move(holds);
  holds.clear();
  return answers;
}

void Analyzer::Impl::file_lock_answers(int location, const std::map<int, std::vector<RmaRecord>>& got) {
  // A lock_all's calls are answered by every target: the call waited for
  // the slowest of them.
  std::map<std::tuple<std::uint32_t, std::int64_t, bool>, LockCallResult> calls;
  for (const auto& [target, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockReply) continue;
      auto it = asked.find({r.number, r.aux});
      if (it == asked.end()) continue;
      const LockCall& c = it->second;
      LockCallResult& res = calls[{c.callpath, c.enter, c.operation}];
      res.location = location;
      res.callpath = c.callpath;
      res.operation = c.operation;
      res.competition = std::max(res.competition, 1e-9 * static_cast<double>(r.t0));
      res.progress = std::max(res.progress, 1e-9 * static_cast<double>(r.t1));
    }
  }
  // Every call was asked in this round: what got no answer waited for nothing.
  asked.clear();
  for (auto& [key, res] : calls) {
    if (res.competition > 0) res.progress = 0;  // (a lock_all call: competition at one target explains it)
    rma_results.lock_calls.push_back(res);
  }
}

}  // namespace onlinews::analysis
