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

// The pattern of kind `K`: charges every instance of it in this epoch to
// `M` (`MBlocking` for a blocking neighborhood call) and publishes its wait.
template <CollKind K, Metric M, DelayKind D, Metric MBlocking = Metric::kCount>
class NbPattern final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_nb_collectives(ReplayContext& ctx) override {
    if (ctx.nb_collectives() == nullptr) return;
    for (const NbCollectiveResult& r : *ctx.nb_collectives()) {
      if (r.kind != K || r.wait <= 0) continue;
      ctx.add_at(r.blocking && MBlocking != Metric::kCount ? MBlocking : M, r.location, r.completion.callpath, r.wait);
      PairSyncFinding f;
      f.location = r.location;
      f.waiting = r.completion.at;
      f.cause = r.cause_at;
      f.wait = r.wait;
      f.delay = D;
      ctx.publish(f);
    }
  }
};

}  // namespace onlinews::analysis
