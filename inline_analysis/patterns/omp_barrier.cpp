// Delay costs of OpenMP barrier waits (seed 000 §7): the last thread to
// reach a barrier instance made the others wait there, as the last rank of
// an MPI barrier does.  Within one rank, from its threads' windows.
//
// A barrier instance is the k-th barrier (explicit, implicit, or the
// runtime's own) of every implicit task of one team; the team's id and size
// come with each implicit task's Enter.  Each thread's synchronization
// interval runs from its previous point with the team (the start of its
// implicit task, or its previous barrier's end) to its barrier's enter.  For
// each thread T that waited w_T, with L the last to arrive:
//   d[c]   = max(L's time on c - T's time on c, 0), call paths compared
//            below the implicit task (the master's paths have its parallel
//            construct above), L's MPI wait states excluded from its time;
//   w      = L's MPI waiting in its interval (Late Sender, Late Receiver,
//            collectives; RMA waits count as its processing);
//   delay_ompbarrier[c] on L += w_T / (sum d + w) x d[c].
// Long-term: each second of L's MPI waiting there caused
// sum_T w_T / (sum d + w) seconds of barrier waiting; delay_costs.cpp passes
// that on to the MPI wait's cause (BarrierCauseFinding, lane OmpBarrier:
// delay_ompbarrier_longterm).  The critical path moves to L over T's
// interval from L's start (BarrierPassFinding, critical_path.cpp).  Nested teams are not
// analyzed here.
#include <algorithm>
#include <climits>
#include <map>
#include <vector>

#include "omp_roles.hpp"

namespace onlinews::analysis {
namespace {

using Profile = std::vector<std::pair<std::uint32_t, std::int64_t>>;  // call path -> ns

void add_to(Profile& p, std::uint32_t cp, std::int64_t ns) {
  for (auto& [c, v] : p) {
    if (c == cp) {
      v += ns;
      return;
    }
  }
  p.emplace_back(cp, ns);
}

class OmpBarrier final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Enter, this, &OmpBarrier::on_enter);
    d.on_event(Phase::Forward, EventKind::Leave, this, &OmpBarrier::on_leave);
    d.on_finding(this, &OmpBarrier::on_late_sender);
    d.on_finding(this, &OmpBarrier::on_late_receiver);
    d.on_finding(this, &OmpBarrier::on_collective);
  }

  // An instance is explained once every member has entered and one has
  // left (the release): a worker's end of the barrier that ends a parallel
  // region comes only with the next fork (ompt/callbacks.cpp), often epochs
  // later, and its wait is known before that.
  void on_walks_done(ReplayContext& ctx) override {
    for (auto it = pending_.begin(); it != pending_.end();) {
      Instance& inst = it->second;
      bool all_left = static_cast<int>(inst.members.size()) >= inst.size;
      std::int64_t release = INT64_MAX;
      for (const Member& m : inst.members) {
        if (m.left) release = std::min(release, m.leave);
        all_left = all_left && m.left;
      }
      if (!inst.explained && static_cast<int>(inst.members.size()) >= inst.size && release != INT64_MAX) {
        explain(inst, release, ctx);
        inst.explained = true;
        inst.epoch = ctx.epoch();
      } else if (inst.explained) {
        for (std::size_t i = 0; i < inst.members.size(); ++i) {
          if (i != inst.last && inst.members[i].left && !inst.members[i].charged) charge(inst, i, ctx);
        }
      }
      if (all_left || ctx.epoch() - inst.epoch >= (inst.explained ? kKeepExplained : kKeepWaiting)) {
        for (Thread& t : threads_) {
          if (t.open == &inst) t.open = nullptr;
        }
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    // MPI waits are needed for intervals still open (outside barriers) and
    // instances not explained yet.
    std::int64_t keep = INT64_MAX;
    for (const auto& t : threads_) {
      if (t.team != 0 && t.barrier == kNoCallpath) keep = std::min(keep, t.start);
    }
    for (const auto& [key, inst] : pending_) {
      if (inst.explained) continue;
      for (const auto& m : inst.members) keep = std::min(keep, m.start);
    }
    for (auto& [loc, v] : mpi_waits_) {
      v.erase(std::remove_if(v.begin(), v.end(), [keep](const MpiWait& w) { return w.enter < keep; }), v.end());
    }
  }

 private:
  struct MpiWait {
    std::int64_t enter;
    std::uint32_t callpath;
    std::int64_t ns;
  };
  // One thread's part of a barrier instance.
  struct Member {
    int location = 0;
    std::int64_t start = 0, enter = 0;  // its interval, ns
    std::int64_t leave = 0;             // the barrier's end (once left)
    std::int64_t wait = 0;              // ns waited in the barrier (tasks run there excluded)
    Profile profile;                    // its interval's time by call path
    bool left = false;
    bool charged = false;               // its wait's delay costs are booked
  };
  struct Instance {
    int size = 0;
    int epoch = 0;  // when its first member came, or when it was explained
    bool explained = false;
    std::vector<Member> members;
    // Once explained: the last member to enter, its processing by call
    // path, and its MPI waiting (ns) in its interval.
    std::size_t last = 0;
    Profile mine;
    std::int64_t w = 0;
  };
  struct Thread {
    std::uint64_t team = 0;  // 0: in no implicit task
    int size = 0;
    std::uint32_t task = kNoCallpath, barrier = kNoCallpath;  // call paths of the task, of the open barrier
    std::uint32_t ordinal = 0;
    std::int64_t start = 0, last = INT64_MIN;
    Instance* open = nullptr;  // the barrier it is in (map nodes do not move), and its place there
    std::size_t member = 0;
    Profile profile;
  };
  // An instance whose members do not all come (or, explained, do not all
  // leave: a worker stays in the last region's barrier) is dropped after so
  // many epochs.
  static constexpr int kKeepWaiting = 64, kKeepExplained = 3;

  // The time since the thread's previous Enter/Leave was spent at `cp`.
  void charge(ReplayContext& ctx, Thread& t, std::uint32_t cp, std::int64_t now) {
    const std::int64_t last = t.last;
    t.last = now;
    if (t.team == 0 || cp == kNoCallpath || last == INT64_MIN || now <= last) return;
    if (t.barrier == kNoCallpath) {
      add_to(t.profile, cp, now - last);
    } else if (t.open != nullptr && roles_.of(ctx, cp).group == OmpGroup::Wait &&
               ctx.callpaths().node(cp).parent == t.barrier) {
      // (The barrier's own wait, as omp_*barrier_wait books it: not the
      // wait of a taskwait inside a task the thread ran in the barrier,
      // which under load made these costs exceed the barrier's waiting.)
      t.open->members[t.member].wait += now - last;
    }
  }
  void on_enter(const Event& e, ReplayContext& ctx) {
    Thread& t = threads_[ctx.location()];
    // (Outside a team only an implicit task's Enter, which names its team, matters.)
    if (t.team == 0 && e.team() == 0) return;
    seen_team_ = true;
    const std::uint32_t cp = ctx.callpath();
    const auto now = static_cast<std::int64_t>(e.time);
    charge(ctx, t, ctx.callpaths().node(cp).parent, now);
    const OmpRole role = roles_.of(ctx, cp);
    const OmpGroup g = role.group;
    if (g == OmpGroup::Team && t.team == 0 && e.team() != 0) {
      t.team = e.team();
      t.size = e.team_size();
      t.task = cp;
      t.ordinal = 0;
      t.start = now;
      t.profile.clear();
    } else if ((g == OmpGroup::ImplicitBarrier || g == OmpGroup::ExplicitBarrier) && t.team != 0 &&
               t.barrier == kNoCallpath && role.task == t.task) {
      t.barrier = cp;
      Instance& inst = pending_[{t.team, t.ordinal++}];
      if (inst.members.empty()) inst.epoch = ctx.epoch();
      inst.size = t.size;
      t.open = &inst;
      t.member = inst.members.size();
      inst.members.push_back({ctx.location(), t.start, now, 0, 0, std::move(t.profile), false, false});
      t.profile.clear();
    }
  }
  void on_leave(const Event& e, ReplayContext& ctx) {
    Thread& t = threads_[ctx.location()];
    if (t.team == 0) return;
    const std::uint32_t cp = ctx.callpath();
    const auto now = static_cast<std::int64_t>(e.time);
    charge(ctx, t, cp, now);
    if (cp == t.barrier) {
      if (t.open != nullptr) {
        Member& m = t.open->members[t.member];
        m.leave = now;
        m.left = true;
        t.open = nullptr;
      }
      t.barrier = kNoCallpath;
      t.start = now;
    } else if (cp == t.task) {
      t.team = 0;
      t.task = t.barrier = kNoCallpath;
      t.profile.clear();
    }
  }

  // MPI wait states (their call's enter and call path, from the finding's
  // event of the MPI view, on the thread that waited).
  void note_wait(const ReplayContext& ctx, std::size_t event, int loc, double wait) {
    const std::uint32_t cp = ctx.callpath_at(event);
    if (wait <= 0 || !seen_team_ || cp == kNoCallpath) return;
    mpi_waits_[loc].push_back({ctx.region_enter_at(event), cp, static_cast<std::int64_t>(wait * 1e9)});
  }
  void on_late_sender(const LateSenderFinding& f, ReplayContext& ctx) { note_wait(ctx, f.event, f.location, f.wait); }
  void on_late_receiver(const LateReceiverFinding& f, ReplayContext& ctx) {
    note_wait(ctx, f.event, f.location, f.wait);
  }
  void on_collective(const CollectiveSyncFinding& f, ReplayContext& ctx) {
    note_wait(ctx, f.event, f.location, f.wait);
  }

  // A call path's key below its implicit task (region ids on the way).
  std::uint64_t key(const ReplayContext& ctx, std::uint32_t cp) {
    if (cp >= keys_.size()) keys_.resize(cp + 64, 0);
    std::uint64_t& k = keys_[cp];
    if (k == 0) {
      std::uint64_t h = 1469598103934665603ull;
      for (std::uint32_t c = cp; c != kNoCallpath && roles_.of(ctx, c).group != OmpGroup::Team;
           c = ctx.callpaths().node(c).parent) {
        h = (h ^ ctx.callpaths().node(c).region) * 1099511628211ull;
      }
      k = h | 1;
    }
    return k;
  }
  // Once every member entered and one left (the release): the last to
  // enter, L, and its processing (its interval without its MPI waits); the
  // critical path over each waiting member's interval is L's; the members
  // that left are charged, with the long-term share of L's MPI waits.
  void explain(Instance& inst, std::int64_t release, ReplayContext& ctx) {
    inst.last = static_cast<std::size_t>(
        std::max_element(inst.members.begin(), inst.members.end(),
                         [](const Member& a, const Member& b) { return a.enter < b.enter; }) -
        inst.members.begin());
    const Member& L = inst.members[inst.last];
    inst.mine = L.profile;
    if (const auto it = mpi_waits_.find(L.location); it != mpi_waits_.end()) {
      for (const MpiWait& mw : it->second) {
        if (mw.enter < L.start || mw.enter >= L.enter) continue;
        inst.w += mw.ns;
        add_to(inst.mine, mw.callpath, -mw.ns);
      }
    }
    double factor = 0;
    for (std::size_t i = 0; i < inst.members.size(); ++i) {
      const Member& T = inst.members[i];
      if (i == inst.last) continue;
      // (From L's start: a worker the runtime woke late was idle before,
      // and T's own time holds the path until then.)
      ctx.publish(BarrierPassFinding{T.location, L.location, std::max(T.start, L.start), T.left ? T.leave : release});
      if (T.left) factor += charge(inst, i, ctx);
    }
    if (inst.w > 0 && factor > 0) ctx.publish(BarrierCauseFinding{L.location, L.start, L.enter, factor});
  }
  // Member i's wait (it left) on L's call paths beyond its own; returns the
  // share of it each second of L's MPI waiting explains.  (A member that
  // leaves after the instance was explained -- the end of a region's
  // barrier, reported with the next fork -- gets its short-term costs then;
  // the MPI waits of L were replayed already.)
  double charge(Instance& inst, std::size_t i, ReplayContext& ctx) {
    Member& T = inst.members[i];
    T.charged = true;
    if (T.wait <= 0) return 0;
    const Member& L = inst.members[inst.last];
    std::vector<double> d(inst.mine.size());
    double sum_d = 0;
    for (std::size_t j = 0; j < inst.mine.size(); ++j) {
      const std::uint64_t k = key(ctx, inst.mine[j].first);
      std::int64_t theirs = 0;
      for (const auto& [c, v] : T.profile) theirs += key(ctx, c) == k ? v : 0;
      d[j] = secs(std::max<std::int64_t>(inst.mine[j].second - theirs, 0));
      sum_d += d[j];
    }
    const double denom = sum_d + secs(inst.w);
    if (denom <= 0) return 0;
    const double scale = secs(T.wait) / denom;
    for (std::size_t j = 0; j < inst.mine.size(); ++j) {
      if (d[j] > 0) ctx.add_inclusive_at(Metric::delay_ompbarrier, L.location, inst.mine[j].first, scale * d[j]);
    }
    return scale;
  }

  bool seen_team_ = false;       // (MPI waits matter only once there are teams)
  PerLocation<Thread> threads_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, Instance> pending_;  // (team, ordinal)
  std::map<int, std::vector<MpiWait>> mpi_waits_;
  std::vector<std::uint64_t> keys_;  // per call path (0: not computed)
  OmpRoles roles_;
};

}  // namespace

std::unique_ptr<Pattern> make_omp_barrier() { return std::make_unique<OmpBarrier>(); }

}  // namespace onlinews::analysis
