// What every collective pattern looks at: the instance's reduced record, this
// rank's own enter and leave, and whether it is the root.
#pragma once
#include <algorithm>
#include <climits>

#include "../pattern.hpp"

namespace onlinews::analysis {

struct CollectiveView {
  const CollRecord* all = nullptr;
  const ScanRecord* prefix = nullptr;
  std::int64_t enter = 0, leave = 0;
  const CommDef* comm = nullptr;
  bool root = false;
  std::uint64_t bytes_out = 0, bytes_in = 0;

  // Fills the view if the current CollectiveEnd belongs to a collective of
  // kind `want` that was analyzed in this epoch.
  bool load(const Event& e, const ReplayContext& ctx, CollKind want) {
    const RegionDef* r = ctx.region();
    const CollResult* res = ctx.collective();
    if (r == nullptr || r->coll != want || res == nullptr || !res->valid) return false;
    if (ctx.region_leave() == kOpen) return false;
    all = &res->all;
    prefix = &res->prefix;
    enter = ctx.region_enter();
    leave = ctx.region_leave();
    comm = ctx.defs().comm(e.comm);
    root = comm != nullptr && e.root() >= 0 && e.root() == comm->my_rank;
    bytes_out = e.bytes_out();
    bytes_in = e.bytes_in();
    return true;
  }
  // Waiting for the last rank to arrive, capped at the own leave.
  double wait_for(std::int64_t latest) const {
    if (latest == INT64_MIN) return 0.0;
    return std::max(0.0, secs(std::min(latest, leave) - enter));
  }
  // Time after the first rank has left (and after the waiting ended).
  double completion() const {
    const std::int64_t l = std::min(all->max_enter, leave);
    return std::max(0.0, secs(leave - std::max(all->min_leave, l)));
  }
};

// Publishes a collective wait and charges its metric.
inline void charge_collective_wait(ReplayContext& ctx, Metric m, double wait, std::int64_t cause) {
  if (wait <= 0) return;
  ctx.add(m, wait);
  CollectiveWaitFinding f{ctx.location(), ctx.callpath(), idx(m), wait, static_cast<int>(cause), ctx.index()};
  ctx.publish(f);
}

}  // namespace onlinews::analysis
