// Roles of a rank's threads in its OpenMP teams, read from the call paths
// of the OMPT construct regions (ompt/constructs.def): shared by the time
// accounting (time_visits.cpp), the idle threads (omp_idle.cpp) and the
// barrier analysis (omp_barrier.cpp).  Each keeps its own cache: a call
// path's role is computed once (call-path ids are stable), since these
// patterns look at every Enter and Leave of every thread.
#pragma once
#include <vector>

#include "../pattern.hpp"

namespace onlinews::analysis {

// The OpenMP category of call path `cp`'s region (None: not a construct).
inline OmpGroup omp_group_of(const ReplayContext& ctx, std::uint32_t cp) {
  if (cp == kNoCallpath) return OmpGroup::None;
  const RegionDef* r = ctx.defs().region(ctx.callpaths().node(cp).region);
  return r != nullptr && r->kind == RegionKind::Omp ? r->omp : OmpGroup::None;
}

struct OmpRole {
  OmpGroup group = OmpGroup::None;
  // An implicit task that is not inside the thread's own parallel
  // construct: the thread is a worker of someone else's team.  (A master's
  // implicit task lies in its "!$omp parallel"; a nested team's master is a
  // worker of the outer team, whose region it is inside.)
  bool worker_task = false;
  std::uint32_t task = kNoCallpath;  // the nearest implicit task at or above it (kNoCallpath: none)
  bool in_team() const { return task != kNoCallpath; }
};

class OmpRoles {
 public:
  OmpRole of(const ReplayContext& ctx, std::uint32_t cp) {
    if (cp >= roles_.size()) {
      roles_.resize(cp + 64);
      known_.resize(cp + 64, 0);
    }
    OmpRole& r = roles_[cp];
    if (known_[cp] == 0) {
      known_[cp] = 1;
      r.group = omp_group_of(ctx, cp);
      r.worker_task = r.group == OmpGroup::Team &&
                      omp_group_of(ctx, ctx.callpaths().node(cp).parent) != OmpGroup::Management;
      for (std::uint32_t c = cp; c != kNoCallpath; c = ctx.callpaths().node(c).parent) {
        if (omp_group_of(ctx, c) == OmpGroup::Team) {
          r.task = c;
          break;
        }
      }
    }
    return r;
  }

 private:
  std::vector<OmpRole> roles_;
  std::vector<std::uint8_t> known_;
};

}  // namespace onlinews::analysis
