// What every pattern of a nonblocking (or neighborhood) collective kind does
// with an instance (nb_collectives.cpp says which start it depends on): the
// completion call waited for that start,
//   wait = max(0, min(cause, completion leave) - completion enter),
// so at most its own time, less any work done between start and completion.
// The wait is charged at the completion call and published as a pair with
// the start it waited for (the delay costs and the critical path move to
// that start's enter, where the wait ended).
#pragma once
#include <algorithm>
#include <climits>

#include "../pattern.hpp"

namespace onlinews::analysis {

inline double nb_wait(const NbCollectiveResult& r) {
  if (!r.latest_in_call || r.cause == INT64_MIN) return 0.0;
  return std::max(0.0, secs(std::min(r.cause, r.completion.leave) - r.completion.enter) - r.charged_before);
}

// Charges every instance of `kind` in this epoch to `m` (`m_blocking` for a
// blocking neighborhood call) and publishes its wait.
inline void charge_nb(ReplayContext& ctx, CollKind kind, Metric m, DelayKind delay, Metric m_blocking = Metric::kCount) {
  if (ctx.nb_collectives() == nullptr) return;
  for (const NbCollectiveResult& r : *ctx.nb_collectives()) {
    if (r.kind != kind) continue;
    const double wait = nb_wait(r);
    if (wait <= 0) continue;
    ctx.add_at(r.blocking && m_blocking != Metric::kCount ? m_blocking : m, r.location, r.completion.callpath, wait);
    PairSyncFinding f;
    f.location = r.location;
    f.waiting = r.completion.at;
    f.cause = r.cause_at;
    f.wait = wait;
    f.delay = delay;
    ctx.publish(f);
  }
}

}  // namespace onlinews::analysis
