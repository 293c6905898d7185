// Idle threads and limited parallelism (DESIGN.md §6, seed 000 §7), with
// the direct delay costs of the idleness.
//
// A rank's master is the first thread that forks a team outside any team
// (the initial thread, in practice).  Its largest team so far has N
// threads.  While the master runs serial code (outside its parallel
// constructs) the N - 1 others sit idle; while it runs a team of n < N,
// N - n of them do.  As in Scalasca, that time is booked on those threads'
// locations at the master's call path of the moment: omp_idle_threads, of
// which the time beside a smaller team is omp_limited_parallelism.  The
// workers are the rank's threads that ran a team's implicit task, in
// location order: the first N - 1 idle in serial code, those from the n-th
// on beside a team of n.  A worker's own time outside its implicit task is
// not charged (time_visits.cpp), so every location's time still adds up to
// the wall time.
//
// The idleness in serial code is the direct cost of that code: delay_ompidle
// on the master, at the same call path, (N - 1) x its time.  Where the
// master waited in MPI, the delay behind the wait kept the workers idle:
// that part goes to the delay (delay_ompidle_longterm).  delay_costs.cpp
// books both, from what this pattern publishes once every window was walked:
// the idleness per call path (IdleCostFinding) and the stretches of serial
// code (IdlePhaseFinding), so they exist only with the root-cause analysis.
//
// N only grows, from the teams the master ran so far, so an online analysis
// books what a single epoch does.  Nested teams are their threads' own time
// (a nested team's master is a worker of the outer team).
#include <algorithm>
#include <climits>
#include <map>
#include <tuple>
#include <vector>

#include "omp_roles.hpp"

namespace onlinews::analysis {
namespace {

class OmpIdle final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Enter, this, &OmpIdle::on_enter);
    d.on_event(Phase::Forward, EventKind::Leave, this, &OmpIdle::on_leave);
  }

  // The idleness of this epoch, on the workers known once every window was
  // walked (the master's may come before theirs); its costs and stretches
  // for the root-cause analysis.
  void on_walks_done(ReplayContext& ctx) override {
    for (const auto& [key, ns] : pending_) {
      const auto [cp, limited, lo, hi] = key;
      const Metric m = limited != 0 ? Metric::omp_limited_parallelism : Metric::omp_idle_threads;
      // (Workers not seen yet -- threads that never recorded -- get none.)
      for (int k = lo; k <= hi && static_cast<std::size_t>(k - 1) < workers_.size(); ++k) {
        ctx.add_inclusive_at(m, workers_[static_cast<std::size_t>(k - 1)], cp, secs(ns));
      }
      if (limited == 0) ctx.publish(IdleCostFinding{master_, cp, (hi - lo + 1) * secs(ns)});
    }
    for (const IdlePhaseFinding& f : stretches_) ctx.publish(f);
    pending_.clear();
    cached_ = pending_.end();
    stretches_.clear();
  }

 private:
  void on_enter(const Event& e, ReplayContext& ctx) {
    const int loc = ctx.location();
    // (A thread other than the master matters only at an implicit task or
    // a fork, which name their team.)
    if (loc != master_ && (e.team() == 0 || (e.flags & evflag::kNestedTeam) != 0)) return;
    const std::uint32_t cp = ctx.callpath();
    const OmpRole role = roles_.of(ctx, cp);
    const OmpGroup g = role.group;
    if (loc != master_) {
      if (role.worker_task) add_worker(loc);
      if (master_ >= 0 || g != OmpGroup::Management || role.in_team()) return;
      master_ = loc;  // its first fork outside any team
      last_ = static_cast<std::int64_t>(e.time);
      workers_.erase(std::remove(workers_.begin(), workers_.end(), loc), workers_.end());
    }
    charge(ctx.callpaths().node(cp).parent, static_cast<std::int64_t>(e.time));
    if (g == OmpGroup::Management) {
      if (depth_++ == 0) team_ = 0;
    } else if (g == OmpGroup::Team && depth_ == 1 && team_ == 0 && e.team_size() > 0) {
      team_ = e.team_size();
      largest_ = std::max(largest_, team_);
    }
  }
  void on_leave(const Event& e, ReplayContext& ctx) {
    if (ctx.location() != master_) return;
    const std::uint32_t cp = ctx.callpath();
    charge(cp, static_cast<std::int64_t>(e.time));
    if (roles_.of(ctx, cp).group == OmpGroup::Management && depth_ > 0) --depth_;
  }

  // The master's time since its previous Enter/Leave was spent at `cp`.
  void charge(std::uint32_t cp, std::int64_t now) {
    const std::int64_t last = last_;
    last_ = now;
    if (cp == kNoCallpath || last == kNever || now <= last) return;
    if (depth_ == 0 && largest_ > 1) {
      const int idle = largest_ - 1;
      pending(cp, 0, 1, idle) += now - last;
      if (!stretches_.empty() && stretches_.back().end == last && stretches_.back().idle_threads == idle) {
        stretches_.back().end = now;
      } else {
        stretches_.push_back({master_, last, now, idle});
      }
    } else if (depth_ == 1 && team_ > 0 && team_ < largest_) {
      pending(cp, 1, team_, largest_ - 1) += now - last;
    }
  }
  std::int64_t& pending(std::uint32_t cp, int limited, int lo, int hi) {
    const Key k{cp, limited, lo, hi};
    if (cached_ == pending_.end() || cached_->first != k) cached_ = pending_.try_emplace(k, 0).first;
    return cached_->second;
  }
  void add_worker(int loc) {
    const auto it = std::lower_bound(workers_.begin(), workers_.end(), loc);
    if (it == workers_.end() || *it != loc) workers_.insert(it, loc);
  }

  static constexpr std::int64_t kNever = INT64_MIN;
  int master_ = -1;
  int largest_ = 1;  // the master's largest team so far
  int depth_ = 0;    // the master's open parallel constructs
  int team_ = 0;     // ... the outermost one's team size (0: not known yet)
  std::int64_t last_ = kNever;
  std::vector<int> workers_;  // sorted
  // (call path, limited parallelism, first and last worker) -> ns, this epoch
  using Key = std::tuple<std::uint32_t, int, int, int>;
  std::map<Key, std::int64_t> pending_;
  std::map<Key, std::int64_t>::iterator cached_ = pending_.end();
  std::vector<IdlePhaseFinding> stretches_;  // this epoch's serial code (contiguous ones joined)
  OmpRoles roles_;
};

}  // namespace

std::unique_ptr<Pattern> make_omp_idle() { return std::make_unique<OmpIdle>(); }

}  // namespace onlinews::analysis
