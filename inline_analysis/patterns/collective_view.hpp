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
  std::uint16_t comm_id = 0;
  std::uint64_t instance = 0;  // its number on the communicator
  bool root = false;
  bool open = false;  // the call's Leave is not in the window: nothing is charged
  std::uint64_t bytes_out = 0, bytes_in = 0;

  // Fills the view if the current CollectiveEnd belongs to a collective of
  // kind `want` that was analyzed in this epoch.
  bool load(const Event& e, const ReplayContext& ctx, CollKind want) {
    const RegionDef* r = ctx.region();
    const CollResult* res = ctx.collective();
    if (r == nullptr || r->coll != want || res == nullptr || !res->valid) return false;
    all = &res->all;
    prefix = &res->prefix;
    instance = res->instance;
    enter = ctx.region_enter();
    leave = ctx.region_leave();
    open = leave == kOpen;
    comm_id = e.comm;
    comm = ctx.defs().comm(e.comm);
    root = comm != nullptr && e.root() >= 0 && e.root() == comm->my_rank;
    bytes_out = e.bytes_out();
    bytes_in = e.bytes_in();
    return true;
  }
  // Waiting for the last rank to arrive, capped at the own leave.
  double wait_for(std::int64_t latest) const {
    if (latest == INT64_MIN || open) return 0.0;
    return std::max(0.0, secs(std::min(latest, leave) - enter));
  }
  // Time after the first rank has left (and after the waiting ended).
  double completion() const {
    if (open) return 0.0;
    const std::int64_t l = std::min(all->max_enter, leave);
    return std::max(0.0, secs(leave - std::max(all->min_leave, l)));
  }
  // A world rank's rank in the communicator (-1: not a member).
  int comm_rank_of_world(std::int64_t w) const { return comm != nullptr ? comm->rank_of_world(w) : -1; }
};

// Charges this member's wait (if any) to `m` and fills what every
// collective synchronization point holds.
inline CollectiveSyncFinding charge_instance(ReplayContext& ctx, const CollectiveView& v, Metric m, double wait) {
  if (wait > 0) ctx.add(m, wait);
  CollectiveSyncFinding f;
  f.location = ctx.location();
  f.callpath = ctx.callpath();
  f.event = ctx.index();
  f.comm = v.comm_id;
  f.metric = wait > 0 ? idx(m) : -1;
  f.wait = std::max(wait, 0.0);
  f.min_leave = v.all->min_leave;
  f.gid = v.comm != nullptr ? v.comm->gid : 0;
  f.instance = static_cast<std::uint32_t>(v.instance);
  return f;
}

// Charges the wait and publishes the instance as a synchronization point:
// `reference` (a rank in the communicator) caused every member's wait, and
// `delayed` says whether anyone waited; both must be the same on every
// member.  Every member that loaded the instance publishes it, whether or
// not it waited or the pattern charges its part.
// `part`: the share of the wait a sub-pattern with its own delay kind
// explains (CollectiveSyncFinding::part).
inline void publish_collective(ReplayContext& ctx, const CollectiveView& v, Metric m, double wait, DelayKind delay,
                               int reference, bool delayed, double part = 0,
                               DelayKind part_delay = DelayKind::kCount) {
  CollectiveSyncFinding f = charge_instance(ctx, v, m, wait);
  f.delay = delay;
  f.reference = reference;
  f.delayed = delayed;
  f.part = part;
  f.part_delay = part_delay == DelayKind::kCount ? delay : part_delay;
  ctx.publish(f);
}

// Early Fence (seed 001, Figure 4): the part of a synchronizing fence's wait
// before the latest RMA operation on this member's window left (the fence
// closes an access epoch; else 0).
inline double early_fence_wait(const CollectiveView& v, const CollResult& r) {
  if (!r.closes_epoch || r.latest_access == INT64_MIN || v.all->max_enter > v.all->min_leave) return 0.0;
  return std::max(0.0, std::min(v.wait_for(v.all->max_enter), v.wait_for(r.latest_access)));
}

// The same for a prefix kind (Scan, Exscan): this member waited for world
// rank `cause`, its latest lower rank.
inline void publish_prefix(ReplayContext& ctx, const CollectiveView& v, Metric m, double wait, std::int64_t cause) {
  CollectiveSyncFinding f = charge_instance(ctx, v, m, wait);
  f.pairwise = true;
  f.pair_cause = static_cast<int>(cause);
  ctx.publish(f);
}

}  // namespace onlinews::analysis
