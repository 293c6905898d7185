// time, visits and the time categories (execution, comp, mpi and its groups,
// onlinews_overhead): exclusive time of every call path, from the intervals
// between consecutive Enter/Leave events of each location.  A worker
// thread's time outside its team's implicit task is not its own: the idle
// threads analysis (omp_idle.cpp) books it at the master's call path.
#include <climits>
#include <vector>

#include "../callpath_sums.hpp"
#include "omp_roles.hpp"

namespace onlinews::analysis {
namespace {

// A call path's category: its region's, except for the waiting part of a
// barrier or a critical section (ompt/constructs.def), which is that
// construct's wait state.
Metric category_of(const ReplayContext& ctx, std::uint32_t cp) {
  if (omp_group_of(ctx, cp) == OmpGroup::Wait) {
    switch (omp_group_of(ctx, ctx.callpaths().node(cp).parent)) {
      case OmpGroup::ImplicitBarrier: return Metric::omp_ibarrier_wait;
      case OmpGroup::ExplicitBarrier: return Metric::omp_ebarrier_wait;
      case OmpGroup::Critical: return Metric::omp_lock_contention_critical;
      default: break;
    }
  }
  return time_category(ctx.defs().region(ctx.callpaths().node(cp).region));
}

class TimeVisits final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Enter, this, &TimeVisits::on_enter);
    d.on_event(Phase::Forward, EventKind::Leave, this, &TimeVisits::on_leave);
  }

 private:
  // The time category of a call path and its ancestors in the metric tree,
  // computed once per call path.
  struct Chain {
    const MetricChain* metrics = nullptr;  // nullptr: not computed yet
    bool team = false;                     // inside an implicit task
    bool worker_task = false;              // entering it makes the thread a worker (omp_roles.hpp)
  };
  const Chain& chain(const ReplayContext& ctx, std::uint32_t cp) {
    if (cp >= chains_.size()) chains_.resize(cp + 64);
    Chain& c = chains_[cp];
    if (c.metrics == nullptr) {
      const OmpRole role = roles_.of(ctx, cp);
      c.team = role.in_team();
      c.worker_task = role.worker_task;
      c.metrics = &metric_chain(category_of(ctx, cp));
    }
    return c;
  }
  // Time since the location's previous Enter/Leave belongs to `cp`: summed
  // in nanoseconds per (location, call path), and added to the profile with
  // the visits once per epoch (callpath_sums.hpp).
  void charge(ReplayContext& ctx, std::uint32_t cp, std::int64_t now) {
    Loc& l = locs_[ctx.location()];
    if (cp != kNoCallpath && l.last != kNever && now > l.last) {
      if (!l.worker || chain(ctx, cp).team) sums_.at(ctx.location(), cp)[kNs] += now - l.last;
    }
    l.last = now;
  }
  void on_enter(const Event& e, ReplayContext& ctx) {
    charge(ctx, ctx.callpaths().node(ctx.callpath()).parent, static_cast<std::int64_t>(e.time));
    // (An implicit task's Enter names its team.  A nested team's workers
    // keep their time: omp_idle.cpp books outermost teams only.)
    if (e.team() != 0 && (e.flags & evflag::kNestedTeam) == 0 && chain(ctx, ctx.callpath()).worker_task) {
      locs_[ctx.location()].worker = true;
    }
    ++sums_.at(ctx.location(), ctx.callpath())[kVisits];
  }
  void on_leave(const Event& e, ReplayContext& ctx) {
    charge(ctx, ctx.callpath(), static_cast<std::int64_t>(e.time));
  }
  void on_walks_done(ReplayContext& ctx) override {
    sums_.flush([&](int loc, std::uint32_t cp, const std::int64_t* v) {
      if (v[kNs] > 0) {
        const MetricChain& m = *chain(ctx, cp).metrics;
        ctx.profile().add_all(loc, cp, m.m, m.n, secs(v[kNs]));
      }
      ctx.profile().add(loc, cp, Metric::visits, static_cast<double>(v[kVisits]));
    });
  }

  enum : int { kNs, kVisits };
  CallpathSums<std::int64_t, 2> sums_;  // this epoch's

  static constexpr std::int64_t kNever = INT64_MIN;
  struct Loc {
    std::int64_t last = kNever;  // the previous Enter/Leave
    bool worker = false;         // a worker of some team
  };
  PerLocation<Loc> locs_;      // persists across epochs
  std::vector<Chain> chains_;  // per call path (call-path ids are stable)
  OmpRoles roles_;
};

}  // namespace

std::unique_ptr<Pattern> make_time_visits() { return std::make_unique<TimeVisits>(); }

}  // namespace onlinews::analysis
