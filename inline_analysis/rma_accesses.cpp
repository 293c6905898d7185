// Which members accessed this rank's windows in each fence epoch, and when
// their latest RMA operation on it left (seed 001: Early Fence, pairwise
// synchronizations).  An origin learns its accesses from its own RMA events;
// at the fence instance that closes the access epoch it sends each target
// one record (window, instance, latest leave).  Instances are numbered alike
// on every member (collectives.cpp), so the target finds its own fence of
// that instance and fills its CollResult.  The exchange runs once per
// epoch, after the collectives' reductions, and only in epochs where some
// rank has RMA to report (agreed with the lost-events flag, replay.cpp).
#include "engine.hpp"

namespace onlinews::analysis {

bool Analyzer::Impl::has_rma() const {
  if (!rma_accesses.empty()) return true;
  for (const CommDef& c : defs.comms) {
    if (c.window && c.usable) return true;
  }
  return false;
}

Task<> Analyzer::Impl::exchange_fence_accesses(const LocationWindow& w, Transport& t) {
  LocationState& st = loc(w.location);
  std::map<int, std::vector<FenceAccess>> out;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::int32_t> mine;  // (window gid, instance) -> its CollResult
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    const Event& e = w.events[i];
    if (payload_of(e.kind) == EventPayload::Rma) {
      std::int64_t& last = rma_accesses[e.comm][e.target()];
      last = std::max(last, static_cast<std::int64_t>(e.time));
      continue;
    }
    if (e.kind != EventKind::CollectiveEnd) continue;
    const RegionDef* rd = defs.region(callpaths.node(st.annot[i].callpath).region);
    const CollKind kind = rd != nullptr ? rd->coll : CollKind::None;
    if (kind == CollKind::WinFree) rma_accesses.erase(e.comm);
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
          if (world >= 0) out[world].push_back({c->gid, r->instance, leave});
        }
      }
    }
    // The accesses belong to this fence's epoch, analyzed or not.
    if (acc != rma_accesses.end()) rma_accesses.erase(acc);
  }
  const auto got = co_await exchange_records(t, out);
  for (const auto& [origin, list] : got) {
    for (const FenceAccess& a : list) {
      auto it = mine.find({a.window_gid, a.instance});
      if (it == mine.end()) continue;  // (every member analyzes the same instances)
      CollResult& r = colls[static_cast<std::size_t>(it->second)];
      ++r.origins;
      r.latest_access = std::max(r.latest_access, a.last_leave);
    }
  }
}

}  // namespace onlinews::analysis
