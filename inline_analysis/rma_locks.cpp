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
  LockCall call{call_at(st, i), payload_of(e.kind) == EventPayload::Rma, 0, origin(i)};
  const std::int64_t enter = call.call.enter, leave = call.call.leave;
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
        l = OpenLock{c.gid, (e.flags & evflag::kExclusiveLock) != 0, leave, lock_numbers++, {call}, 1};
      });
      return;
    case EventKind::WinFlush:
      each([&](int target) {
        auto it = open_locks.find({e.comm, target});
        if (it == open_locks.end() || it->second.calls.size() >= kMaxCalls) return;
        call.index = it->second.next_index++;
        it->second.calls.push_back(call);
      });
      return;
    case EventKind::RmaPut:
    case EventKind::RmaGet:
    case EventKind::RmaAtomic: {
      if (leave - enter < kMinOperationNs) return;
      auto it = open_locks.find({e.comm, c.world_rank_of(e.target())});
      if (it == open_locks.end() || it->second.calls.size() >= kMaxCalls) return;
      call.index = it->second.next_index++;
      it->second.calls.push_back(call);
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
        call.index = l.next_index++;
        l.calls.push_back(call);
        l.release_begin = enter;
        send_lock_calls(l, target, leave, out, here(i));
        open_locks.erase(it);
      });
      return;
    default:
      return;
  }
}

// Sends the target the calls of lock epoch `l` collected so far: all of them
// at its unlock (`release` its leave; the lock's own record, index 0, tells
// the target the epoch's hold), else, at the end of a window, all but the
// lock (`release` unknown: INT64_MAX), so that they are answered against
// the target's MPI calls of the same window and a long epoch keeps little.
void Analyzer::Impl::send_lock_calls(OpenLock& l, int target, std::int64_t release,
                                     std::map<int, std::vector<RmaRecord>>& out, EventRef unlock) {
  const bool unlocked = release != INT64_MAX;
  std::size_t kept = 0;
  for (const LockCall& call : l.calls) {
    if (!unlocked && call.index == 0) {
      l.calls[kept++] = call;
      continue;
    }
    RmaRecord r = RmaRecord::make(RmaRecord::kLockCall, l.gid, l.number, l.acquire, release, unlock);
    r.t4 = unlocked ? l.release_begin : INT64_MAX;
    r.t2 = call.call.enter;
    r.t3 = call.call.leave;
    r.aux = call.index;
    r.flags = l.exclusive ? RmaRecord::kExclusive : 0;
    out[target].push_back(r);
    asked[{l.number, call.index}] = call;
  }
  l.calls.resize(kept);
}

std::map<int, std::vector<RmaRecord>> Analyzer::Impl::answer_lock_calls(
    const LocationWindow& w, const std::map<int, std::vector<RmaRecord>>& got) {
  // This rank's epochs of this round, one per (origin, number).
  for (const auto& [origin, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockCall || r.aux != 0) continue;
      holds[r.window_gid].push_back({origin, (r.flags & RmaRecord::kExclusive) != 0, r.t0, r.t4, r.t1, r.at});
    }
  }
  // Where this rank was inside an MPI call or onlinews' own work (either
  // lets MPI progress), in order: from the Leaves, whose annotation holds
  // their call's enter also when it lies in a window before, and from the
  // Enter of a call still open at the window's end.  A call of an origin
  // that began before a requested cut is recorded after it (at its leave),
  // so this rank's MPI calls of the window before count too.
  const LocationState& st = loc(w.location);
  // Kept as their union, sorted (nested and overlapping calls, a tool
  // region inside MPI, as one).  Calls come in the order they were left, so
  // a call swallows at most the ones nested in it just before: linear, where
  // sorting a window of a million polls was the lock analysis' largest cost.
  std::vector<std::pair<std::int64_t, std::int64_t>> in_mpi = std::move(in_mpi_before);
  in_mpi_before.clear();
  auto add = [&in_mpi](std::int64_t a, std::int64_t b) {
    while (!in_mpi.empty() && in_mpi.back().first >= a) {
      b = std::max(b, in_mpi.back().second);
      in_mpi.pop_back();
    }
    if (!in_mpi.empty() && in_mpi.back().second >= a) {
      in_mpi.back().second = std::max(in_mpi.back().second, b);
    } else {
      in_mpi.emplace_back(a, b);
    }
  };
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    const Event& e = w.events[i];
    const EventAnnotation& a = st.annot[i];
    const bool leave = e.kind == EventKind::Leave;
    if (!leave && !(e.kind == EventKind::Enter && a.leave == kOpen)) continue;
    if (a.callpath == kNoCallpath) continue;
    const RegionDef* rd = defs.region(callpaths.node(a.callpath).region);
    if (rd == nullptr || (rd->kind != RegionKind::Mpi && rd->kind != RegionKind::Tool)) continue;
    add(a.enter, leave ? static_cast<std::int64_t>(e.time) : INT64_MAX);
  }
  // Kept for the next window: this one's calls (the one before drops out).
  const std::int64_t first = w.events.empty() ? INT64_MIN : static_cast<std::int64_t>(w.events.front().time);
  for (const auto& iv : in_mpi) {
    if (iv.second >= first) in_mpi_before.push_back(iv);
  }
  std::map<int, std::vector<RmaRecord>> answers;
  for (const auto& [origin, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockCall) continue;
      const bool exclusive = (r.flags & RmaRecord::kExclusive) != 0;
      const std::int64_t enter = r.t2, leave = r.t3;
      std::int64_t released = INT64_MIN;
      EventRef released_by;
      bool in_call = false;
      for (const auto* by : {&holds, &holds_before}) {
        const auto found = by->find(r.window_gid);
        if (found == by->end()) continue;
        for (const Hold& h : found->second) {
          if (h.origin == origin || !(h.exclusive || exclusive)) continue;
          // The other epoch held the lock first (it released before this
          // epoch did), held it before this call left, and released it
          // during its unlock, which began before this call left and ended
          // after it began (the lock may be granted before the releasing
          // unlock returns).
          if (h.release < r.t1 && h.acquire < leave && h.release_begin < leave && h.release > enter) {
            const std::int64_t at = std::min(h.release, leave);
            if (at > released) {
              released = at;
              released_by = h.unlock;
              // The lock may be granted before the releasing unlock
              // returns: then the wait ended before that unlock's leave
              // (the replay takes the unlock's enter as its moment).
              in_call = h.release <= leave;
            }
          }
        }
      }
      RmaRecord answer = RmaRecord::make(RmaRecord::kLockReply, r.window_gid, r.number, 0, 0);
      answer.aux = r.aux;
      if (released > enter) {
        answer.t0 = released - enter;
        answer.at = released_by;
        answer.flags = in_call ? RmaRecord::kReleasedInCall : 0;
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

void Analyzer::Impl::file_lock_answers(const std::map<int, std::vector<RmaRecord>>& got) {
  // A lock_all's calls are answered by every target: the call waited for
  // the slowest of them.
  std::map<std::tuple<std::uint32_t, std::int64_t, bool>, LockCallResult> calls;
  for (const auto& [target, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind != RmaRecord::kLockReply) continue;
      auto it = asked.find({r.number, r.aux});
      if (it == asked.end()) continue;
      const LockCall& c = it->second;
      LockCallResult& res = calls[{c.call.callpath, c.call.enter, c.operation}];
      res.location = c.location;
      res.call = c.call;
      res.operation = c.operation;
      const double competition = 1e-9 * static_cast<double>(r.t0);
      if (competition > res.competition) {
        res.competition = competition;
        res.released_by = r.at;
        res.released_in_call = (r.flags & RmaRecord::kReleasedInCall) != 0;
      }
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
