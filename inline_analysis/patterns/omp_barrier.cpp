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
// interval (BarrierPassFinding, critical_path.cpp).  Nested teams are not
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

  void on_walks_done(ReplayContext& ctx) override {
    for (auto it = pending_.begin(); it != pending_.end();) {
      auto& inst = it->second;
      if (static_cast<int>(inst.members.size()) >= inst.size) {
        explain(inst, ctx);
      } else if (ctx.epoch() - inst.epoch < kKeepEpochs) {
        ++it;
        continue;
      }
      it = pending_.erase(it);
    }
    // MPI waits before every interval still open are no longer needed.
    std::int64_t keep = INT64_MAX;
    for (const auto& t : threads_) keep = std::min(keep, t.team != 0 ? t.start : keep);
    for (const auto& [key, inst] : pending_) {
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
    std::int64_t leave = 0;             // the barrier's end
    std::int64_t wait = 0;              // ns waited in the barrier (tasks run there excluded)
    Profile profile;                    // its interval's time by call path
  };
  struct Instance {
    int size = 0;
    int epoch = 0;  // when its first member came
    std::vector<Member> members;
  };
  struct Thread {
    std::uint64_t team = 0;  // 0: in no implicit task
    int size = 0;
    std::uint32_t task = kNoCallpath, barrier = kNoCallpath;  // call paths of the task, of the open barrier
    std::uint32_t ordinal = 0;
    std::int64_t start = 0, last = INT64_MIN;
    Member at;  // the barrier being waited in
    Profile profile;
  };
  static constexpr int kKeepEpochs = 3;  // an instance whose members never all come is dropped then

  Thread& thread(int loc) {
    const auto l = static_cast<std::size_t>(loc);
    if (l >= threads_.size()) threads_.resize(l + 1);
    return threads_[l];
  }
  // The time since the thread's previous Enter/Leave was spent at `cp`.
  void charge(ReplayContext& ctx, Thread& t, std::uint32_t cp, std::int64_t now) {
    const std::int64_t last = t.last;
    t.last = now;
    if (t.team == 0 || cp == kNoCallpath || last == INT64_MIN || now <= last) return;
    if (t.barrier == kNoCallpath) {
      add_to(t.profile, cp, now - last);
    } else if (roles_.of(ctx, cp).group == OmpGroup::Wait) {
      t.at.wait += now - last;
    }
  }
  void on_enter(const Event& e, ReplayContext& ctx) {
    Thread& t = thread(ctx.location());
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
      t.at = {ctx.location(), t.start, now, 0, 0, std::move(t.profile)};
      t.profile.clear();
    }
  }
  void on_leave(const Event& e, ReplayContext& ctx) {
    Thread& t = thread(ctx.location());
    if (t.team == 0) return;
    const std::uint32_t cp = ctx.callpath();
    const auto now = static_cast<std::int64_t>(e.time);
    charge(ctx, t, cp, now);
    if (cp == t.barrier) {
      t.at.leave = now;
      Instance& inst = pending_[{t.team, t.ordinal++}];
      if (inst.members.empty()) inst.epoch = ctx.epoch();
      inst.size = t.size;
      inst.members.push_back(std::move(t.at));
      t.barrier = kNoCallpath;
      t.start = now;
    } else if (cp == t.task) {
      t.team = 0;
      t.task = t.barrier = kNoCallpath;
      t.profile.clear();
    }
  }

  // MPI wait states (their call's enter, on the thread that waited).
  void note_wait(const ReplayContext& ctx, int loc, double wait) {
    if (wait > 0 && seen_team_) mpi_waits_[loc].push_back({ctx.region_enter(), ctx.callpath(), static_cast<std::int64_t>(wait * 1e9)});
  }
  void on_late_sender(const LateSenderFinding& f, ReplayContext& ctx) { note_wait(ctx, f.location, f.wait); }
  void on_late_receiver(const LateReceiverFinding& f, ReplayContext& ctx) { note_wait(ctx, f.location, f.wait); }
  void on_collective(const CollectiveSyncFinding& f, ReplayContext& ctx) { note_wait(ctx, f.location, f.wait); }

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
  void explain(Instance& inst, ReplayContext& ctx) {
    const auto last = std::max_element(inst.members.begin(), inst.members.end(),
                                       [](const Member& a, const Member& b) { return a.enter < b.enter; });
    const Member& L = *last;
    // L's processing: its interval without its MPI waits.
    Profile mine = L.profile;
    std::int64_t w = 0;
    if (const auto it = mpi_waits_.find(L.location); it != mpi_waits_.end()) {
      for (const MpiWait& mw : it->second) {
        if (mw.enter < L.start || mw.enter >= L.enter) continue;
        w += mw.ns;
        add_to(mine, mw.callpath, -mw.ns);
      }
    }
    double factor = 0;
    std::vector<double> d(mine.size());
    for (const Member& T : inst.members) {
      if (&T == &L || T.wait <= 0) continue;
      double sum_d = 0;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const std::uint64_t k = key(ctx, mine[i].first);
        std::int64_t theirs = 0;
        for (const auto& [c, v] : T.profile) theirs += key(ctx, c) == k ? v : 0;
        d[i] = secs(std::max<std::int64_t>(mine[i].second - theirs, 0));
        sum_d += d[i];
      }
      // On the critical path T's time up to the barrier's end is L's.
      ctx.publish(BarrierPassFinding{T.location, L.location, T.start, T.leave});
      const double denom = sum_d + secs(w);
      if (denom <= 0) continue;
      const double scale = secs(T.wait) / denom;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        if (d[i] > 0) ctx.add_inclusive_at(Metric::delay_ompbarrier, L.location, mine[i].first, scale * d[i]);
      }
      factor += scale;
    }
    if (w > 0 && factor > 0) ctx.publish(BarrierCauseFinding{L.location, L.start, L.enter, factor});
  }

  bool seen_team_ = false;       // (MPI waits matter only once there are teams)
  std::vector<Thread> threads_;  // per location
  std::map<std::pair<std::uint64_t, std::uint32_t>, Instance> pending_;  // (team, ordinal)
  std::map<int, std::vector<MpiWait>> mpi_waits_;
  std::vector<std::uint64_t> keys_;  // per call path (0: not computed)
  OmpRoles roles_;
};

}  // namespace

std::unique_ptr<Pattern> make_omp_barrier() { return std::make_unique<OmpBarrier>(); }

}  // namespace onlinews::analysis
