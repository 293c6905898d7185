// What every pattern of a nonblocking (or neighborhood) collective kind does
// with an instance (nb_collectives.cpp says which start its completion
// waited for, and how long: at most the completion call's own time, less
// any work done between start and completion).  The wait is charged at the
// completion call and published as a pair with the start it waited for (the
// delay costs and the critical path move to that start's enter, where the
// wait ended).
#pragma once
#include "../pattern.hpp"

namespace onlinews::analysis {

// Charges every instance of `kind` in this epoch to `m` (`m_blocking` for a
// blocking neighborhood call) and publishes its wait.
inline void charge_nb(ReplayContext& ctx, CollKind kind, Metric m, DelayKind delay, Metric m_blocking = Metric::kCount) {
  if (ctx.nb_collectives() == nullptr) return;
  for (const NbCollectiveResult& r : *ctx.nb_collectives()) {
    if (r.kind != kind || r.wait <= 0) continue;
    ctx.add_at(r.blocking && m_blocking != Metric::kCount ? m_blocking : m, r.location, r.completion.callpath, r.wait);
    PairSyncFinding f;
    f.location = r.location;
    f.waiting = r.completion.at;
    f.cause = r.cause_at;
    f.wait = r.wait;
    f.delay = delay;
    ctx.publish(f);
  }
}

}  // namespace onlinews::analysis
