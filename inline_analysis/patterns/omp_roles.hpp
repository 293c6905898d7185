// Roles of a rank's threads in its OpenMP teams, read from the call paths
// of the OMPT construct regions (ompt/constructs.def): shared by the time
// accounting (time_visits.cpp) and the idle-thread analysis (omp_idle.cpp).
#pragma once
#include "../pattern.hpp"

namespace onlinews::analysis {

// The OpenMP category of call path `cp`'s region (None: not a construct).
inline OmpGroup omp_group_of(const ReplayContext& ctx, std::uint32_t cp) {
  if (cp == kNoCallpath) return OmpGroup::None;
  const RegionDef* r = ctx.defs().region(ctx.callpaths().node(cp).region);
  return r != nullptr && r->kind == RegionKind::Omp ? r->omp : OmpGroup::None;
}

// An implicit task entered at `cp` that is not inside the thread's own
// parallel construct: the thread is a worker of someone else's team.  (A
// master's implicit task lies in its "!$omp parallel"; a nested team's
// master is a worker of the outer team, whose region it is inside.)
inline bool worker_task(const ReplayContext& ctx, std::uint32_t cp) {
  if (omp_group_of(ctx, cp) != OmpGroup::Team) return false;
  return omp_group_of(ctx, ctx.callpaths().node(cp).parent) != OmpGroup::Management;
}

// Whether `cp` lies inside an implicit task (the thread works for a team).
inline bool in_team(const ReplayContext& ctx, std::uint32_t cp) {
  for (std::uint32_t c = cp; c != kNoCallpath; c = ctx.callpaths().node(c).parent) {
    if (omp_group_of(ctx, c) == OmpGroup::Team) return true;
  }
  return false;
}

}  // namespace onlinews::analysis
