// The RMA partners' times, in one sparse exchange per epoch after the
// collectives' reductions, and only in epochs where some rank has a window
// (agreed with the lost-events flag, replay.cpp), so programs without RMA
// pay nothing.  (Seed 001 uses an exchange window and MPI_Get/Accumulate;
// the tool's bulk exchange needs no RMA of its own and one round per epoch.)
//
// Fences: an origin keeps its operations per window and target (latest
// leave) until the fence instance that closes their access epoch, and sends
// each target one record (window, instance, latest leave).  Instances are
// numbered alike on every member (collectives.cpp), so the target finds its
// own fence of that instance and fills its CollResult (Early Fence, pairwise
// synchronizations).
//
// Locks: rma_locks.cpp (a second round, in which the targets answer).
//
// General active target synchronization (post/start/complete/wait): the
// target sends each origin of its group its post enter when it posts; the
// origin sends each target of its group its complete enter and the leave of
// its latest operation on it when it completes.  Epochs pair by their
// number per window and pair of ranks.  An epoch waits (across cuts) until
// all its partners' records came; then it becomes a result for the patterns
// (rma_late_post.cpp, rma_early_wait.cpp, rma_pairsync.cpp).  After lost
// events the numbering cannot be trusted: everything is forgotten, and
// post/start/complete/wait are left out until a window starts at a
// synchronizing cut, where every rank numbers from 0 again.
#include "engine.hpp"

namespace onlinews::analysis {

bool Analyzer::Impl::has_rma() const {
  if (!rma_accesses.empty() || !open_access.empty() || !open_exposure.empty() || !ended_access.empty() ||
      !ended_exposure.empty() || !open_locks.empty()) {
    return true;
  }
  for (const CommDef& c : defs.comms) {
    if (c.window && c.usable) return true;
  }
  return false;
}

void Analyzer::Impl::forget_window(std::uint16_t id) {
  rma_accesses.erase(id);
  const CommDef* c = defs.comm(id);
  if (c == nullptr) return;
  for (auto* numbers : {&access_number, &exposure_number}) {
    for (auto it = numbers->begin(); it != numbers->end();) it = it->first.first == c->gid ? numbers->erase(it) : std::next(it);
  }
}

void Analyzer::Impl::forget_rma() {
  rma_resync = true;
  // An epoch open across the lost window is closed later by a call that
  // finds nothing to close: not the program's error.
  lost_rma_epochs = true;
  rma_accesses.clear();
  open_access.clear();
  open_exposure.clear();
  ended_access.clear();
  ended_exposure.clear();
  arrived_posts.clear();
  arrived_accesses.clear();
  access_number.clear();
  exposure_number.clear();
  open_locks.clear();
  asked.clear();
  holds.clear();
  holds_before.clear();
  in_mpi_before.clear();
}

namespace {

// Drops the items `settled` settles (it moves their results out) and keeps
// the others, in order.
template <class T, class Settle>
void settle_pending(std::vector<T>& pending, Settle settled) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (settled(pending[i])) continue;
    if (kept != i) pending[kept] = std::move(pending[i]);  // (a self-move would empty it)
    ++kept;
  }
  pending.resize(kept);
}

}  // namespace

// One event of the MPI location's window: collects operations and epochs and
// the records they send.
void Analyzer::Impl::rma_event(const LocationWindow& w, const LocationState& st, std::size_t i,
                               std::map<int, std::vector<RmaRecord>>& out) {
  const Event& e = w.events[i];
  const CommDef* c = defs.comm(e.comm);
  if (c == nullptr || !c->window) return;
  // A window some member used from a thread that is not analyzed: its
  // partners' records may never come.
  if (mixed_rma.count(c->gid) != 0 || mixed_collective.count(c->gid) != 0) return;
  const CallRef call = call_at(st, i);
  if (e.kind == EventKind::WinLock || e.kind == EventKind::WinUnlock || e.kind == EventKind::WinFlush ||
      payload_of(e.kind) == EventPayload::Rma) {
    lock_event(w, st, i, *c, out);
  }
  if (rma_resync && payload_of(e.kind) == EventPayload::RmaSync) return;
  switch (e.kind) {
    case EventKind::RmaPut:
    case EventKind::RmaGet:
    case EventKind::RmaAtomic: {
      auto open = open_access.find(e.comm);
      if (open == open_access.end()) {
        // A fence epoch's access (not one of a lock or access epoch).
        if (open_locks.count({e.comm, c->world_rank_of(e.target())}) == 0) {
          std::int64_t& last = rma_accesses[e.comm][e.target()];
          last = std::max(last, static_cast<std::int64_t>(e.time));
        }
        return;
      }
      const int target = c->world_rank_of(e.target());
      open->second.r.ops.push_back({call, INT64_MIN, {}});
      open->second.op_target.push_back(target);
      std::int64_t& t_last = open->second.last_leave[target];
      t_last = std::max(t_last, static_cast<std::int64_t>(e.time));
      return;
    }
    case EventKind::WinStart:
    case EventKind::WinPost: {
      if (e.group() >= defs.groups.size()) return;
      const bool start = e.kind == EventKind::WinStart;
      PeerSeqs peers;
      for (const int r : defs.groups[e.group()]) {
        const int world = c->world_rank_of(r);
        if (world < 0) continue;
        auto& number = (start ? access_number : exposure_number)[{c->gid, world}];
        peers.emplace_back(world, number++);
      }
      // A second start (post) before the complete (wait) of the first is
      // erroneous: the open epoch is dropped and counted.
      if (start ? open_access.count(e.comm) != 0 : open_exposure.count(e.comm) != 0) count_rma_error();
      if (start) {
        OpenAccess& o = open_access[e.comm] = OpenAccess{};
        o.gid = c->gid;
        o.targets = std::move(peers);
        o.r.location = origin(i);
        o.r.start = call;
        o.r.targets = static_cast<int>(o.targets.size());
      } else {
        OpenExposure& x = open_exposure[e.comm] = OpenExposure{};
        x.gid = c->gid;
        x.origins = std::move(peers);
        x.r.location = origin(i);
        for (const auto& [origin, number] : x.origins) {
          out[origin].push_back(RmaRecord::make(RmaRecord::kExposure, c->gid, number, call.enter, 0, call.at));
        }
      }
      return;
    }
    case EventKind::WinComplete: {
      auto open = open_access.find(e.comm);
      if (open == open_access.end()) {  // a complete without a start: nothing to pair
        count_rma_error();
        return;
      }
      OpenAccess& o = open->second;
      o.r.complete = call;
      for (const auto& [target, number] : o.targets) {
        auto last = o.last_leave.find(target);
        const std::int64_t latest = last != o.last_leave.end() ? last->second : o.r.start.leave;
        o.r.accessed += last != o.last_leave.end() ? 1 : 0;
        out[target].push_back(RmaRecord::make(RmaRecord::kAccess, c->gid, number, call.enter, latest, call.at));
      }
      ended_access.push_back(std::move(o));
      open_access.erase(open);
      return;
    }
    case EventKind::WinWait: {
      auto open = open_exposure.find(e.comm);
      if (open == open_exposure.end()) {  // a wait without a post
        count_rma_error();
        return;
      }
      OpenExposure& x = open->second;
      x.r.wait = call;
      ended_exposure.push_back(std::move(x));
      open_exposure.erase(open);
      return;
    }
    default:
      return;
  }
}

// Files what came and turns the epochs whose partners are all known into
// results.
void Analyzer::Impl::pair_rma_epochs(const std::map<int, std::vector<RmaRecord>>& got) {
  for (const auto& [peer, list] : got) {
    for (const RmaRecord& r : list) {
      if (r.kind == RmaRecord::kExposure) arrived_posts[{r.window_gid, peer, r.number}] = {r.t0, r.at};
      if (r.kind == RmaRecord::kAccess) arrived_accesses[{r.window_gid, peer, r.number}] = {r.t0, r.t1, r.at};
    }
  }
  settle_pending(ended_access, [this](OpenAccess& o) {
    for (const auto& [target, number] : o.targets) {
      if (o.post.count(target) != 0) continue;
      auto it = arrived_posts.find({o.gid, target, number});
      if (it == arrived_posts.end()) continue;
      o.post[target] = it->second;
      arrived_posts.erase(it);
    }
    if (o.post.size() < o.targets.size()) return false;
    for (const auto& [target, post] : o.post) {
      if (post.first <= o.r.latest_post) continue;
      o.r.latest_post = post.first;
      o.r.latest_post_at = post.second;
    }
    for (std::size_t k = 0; k < o.r.ops.size(); ++k) {
      const auto& post = o.post[o.op_target[k]];
      o.r.ops[k].post = post.first;
      o.r.ops[k].post_at = post.second;
    }
    rma_results.access.push_back(std::move(o.r));
    return true;
  });
  settle_pending(ended_exposure, [this](OpenExposure& x) {
    for (auto& [origin, number] : x.origins) {
      if (number == UINT64_MAX) continue;  // (known already)
      auto it = arrived_accesses.find({x.gid, origin, number});
      if (it == arrived_accesses.end()) continue;
      if (it->second.complete > x.r.latest_complete) {
        x.r.latest_complete = it->second.complete;
        x.r.latest_complete_at = it->second.at;
      }
      x.r.latest_access = std::max(x.r.latest_access, it->second.latest);
      arrived_accesses.erase(it);
      number = UINT64_MAX;
      ++x.known;
    }
    if (x.known < x.origins.size()) return false;
    rma_results.exposure.push_back(x.r);
    return true;
  });
}

Task<> Analyzer::Impl::exchange_rma(const LocationWindow& w, Transport& t) {
  LocationState& st = loc(w.location);
  if (rma_resync && sync_in.bounds.starts_synchronized) {
    // Every rank numbers post/start epochs from 0 again (none was opened
    // while out of step: their calls were left out).
    access_number.clear();
    exposure_number.clear();
    arrived_posts.clear();
    arrived_accesses.clear();
    rma_resync = false;
  }
  std::map<int, std::vector<RmaRecord>> out;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::int32_t> mine;  // (window gid, instance) -> its CollResult
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    const Event& e = w.events[i];
    const EventPayload pl = payload_of(e.kind);
    if (pl == EventPayload::Rma || pl == EventPayload::RmaSync) {
      rma_event(w, st, i, out);
      continue;
    }
    if (e.kind != EventKind::CollectiveEnd) continue;
    const RegionDef* rd = defs.region(callpaths.node(st.annot[i].callpath).region);
    const CollKind kind = rd != nullptr ? rd->coll : CollKind::None;
    if (kind == CollKind::WinFree) forget_window(e.comm);
    if (kind != CollKind::Fence) continue;
    auto acc = rma_accesses.find(e.comm);
    const std::int32_t link = st.links[i];
    CollResult* r = link >= 0 && static_cast<std::size_t>(link) < colls.size() ? &colls[link] : nullptr;
    const CommDef* c = defs.comm(e.comm);
    if (r != nullptr && r->valid && c != nullptr && (e.flags & evflag::kNoPrecede) == 0) {
      r->closes_epoch = true;
      mine[{c->gid, r->instance}] = link;
      if (acc != rma_accesses.end()) {
        for (const auto& [target, leave] : acc->second) {
          const int world = c->world_rank_of(target);
          if (world >= 0) out[world].push_back(RmaRecord::make(RmaRecord::kFenceAccess, c->gid, r->instance, leave));
        }
      }
    }
    // The accesses belong to this fence's epoch, analyzed or not.
    if (acc != rma_accesses.end()) rma_accesses.erase(acc);
  }
  // Lock epochs still open: their calls of this window go now.
  for (auto& [key, l] : open_locks) send_lock_calls(l, key.second, INT64_MAX, out);
  const auto got = co_await exchange_records(t, out);
  for (const auto& [origin, list] : got) {
    for (const RmaRecord& a : list) {
      if (a.kind != RmaRecord::kFenceAccess) continue;
      auto it = mine.find({a.window_gid, a.number});
      if (it == mine.end()) continue;  // (every member analyzes the same instances)
      CollResult& r = colls[static_cast<std::size_t>(it->second)];
      ++r.origins;
      r.latest_access = std::max(r.latest_access, a.t0);
    }
  }
  pair_rma_epochs(got);
  // Second round: the targets answer the lock epochs' calls.
  const auto answers = co_await exchange_records(t, answer_lock_calls(w, got));
  file_lock_answers(answers);
}

}  // namespace onlinews::analysis
