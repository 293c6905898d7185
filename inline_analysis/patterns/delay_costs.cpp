// Delay costs (seed 000, Algorithm 1) and the wait-state classes, in the
// backward replay over synchronization points (sync_replay.hpp).
//
// At a point where rank B waited for rank A, the delay lies in A's
// synchronization interval (since their previous common point): the call
// paths on which A spent more processing time than B (the difference profile
// d, positive entries) and A's own waiting inside the interval (w).  With
// s = min(wait / (sum d + w), 1):
//   short-term costs  delay_<kind>[c]          += s * d[c]       (on A)
//   long-term costs   delay_<X>_longterm[c]    += cost_X / (sum d + w) * d[c]
//                     where cost_X is the waiting of kind X that B's wait
//                     in turn caused later (accumulated by this replay);
//   A's own waits e in the interval propagate it: cost_X[e] += ... * wait(e).
// Across a requested cut A's interval goes on in the window before
// (interval_carry.hpp); that window was walked already, so the costs its
// waits e receive go to their causes after this walk, which charge them as
// long-term costs of the delays they explained there (kept_) and pass them
// on to their own waits in those intervals, kForwardRounds hops at most and
// one window back (docs/design.md); what would go further is counted
// (unattributed_longterm_seconds).
// Collectives do the same for each member that waited, with the causing
// rank's (latest / root / latest sender) interval since its previous point
// with every member, uncapped; each member's wait is a pair with it.
//
// A pair of calls (PairSyncFinding: RMA Late Post, Early Wait, lock
// competition) is explained like a message, with its finding's delay kind.
//
// Idle threads (seed 000 §7): a wait of a master in serial code, while
// k worker threads sat idle (IdlePhaseFinding, omp_idle.cpp), kept them idle
// too: it passes k x wait on in the OmpIdle lane, which its cause charges as
// delay_ompidle_longterm, and that much of the master's own delay_ompidle
// (booked here for all of its serial time, IdleCostFinding) is taken back.
// Likewise an MPI wait of the last thread to reach an OpenMP barrier, in
// its interval before it, made the others wait there (BarrierCauseFinding,
// omp_barrier.cpp): factor x wait in the OmpBarrier lane, charged to its
// cause as delay_ompbarrier_longterm.
//
// Classes of Late Sender / Late Receiver waits: indirect = the part explained
// by the cause's own waiting (s * w, sent back to the waiting rank after the
// walk), direct = the rest; propagating = the largest part of a wait that
// caused a later one, terminal = the rest.
#include <algorithm>
#include <bit>
#include <iterator>
#include <map>
#include <span>
#include <tuple>

#include "../resident.hpp"
#include "../sync_replay.hpp"

namespace onlinews::analysis {
namespace {

constexpr Metric kShort[kDelayKinds] = {
#define ONLINEWS_DELAY(name, short_term, long_term) Metric::short_term,
#include "../delay_kinds.def"
#undef ONLINEWS_DELAY
};
constexpr Metric kLong[kDelayKinds] = {
#define ONLINEWS_DELAY(name, short_term, long_term) Metric::long_term,
#include "../delay_kinds.def"
#undef ONLINEWS_DELAY
};

class DelayCosts final : public Pattern, public SyncHandler {
 public:
  void subscribe(Dispatch& d) override {
    d.on_sync(this);
    d.on_finding(this, &DelayCosts::on_idle_phase);
    d.on_finding(this, &DelayCosts::on_idle_cost);
    d.on_finding(this, &DelayCosts::on_barrier_cause);
  }
  void on_epoch_end(ReplayContext&) override {
    idle_.clear();
    barrier_.clear();
  }
  bool uses_intervals() const override { return true; }
  // The long-term costs a wait passes on (by the kind they finally cause)
  // depend on the waits it caused later: symbolic (sym.hpp).
  int lanes() const override { return kDelayKinds; }

  void begin_walk(SyncContext& ctx) override {
    group_event_ = SIZE_MAX;
    assign_resident(cost_, ctx.points().size(), Sym{});
    open_.clear();
    open_callpaths_.clear();
    open_d_.clear();
    assign_resident(carried_cost_, ctx.carried_waits().size(), Sym{});
    lost_ = Sym{};
  }

  // Scan waits have no delay metric (as in Scalasca): both sides skip them.
  void waiting_p2p(SyncPoint& sp, SyncContext& ctx, ByteWriter& out) override {
    if (is_scan(sp.kind)) return;
    // (Also a wait for a send of the window before, LsRecvEarlier: the
    // sender explains it with its interval kept from that window.)
    const auto iv = ctx.interval_with(ctx.current(), sp.peer);
    if (iv.truncated) ctx.note_truncated();  // (counted once per wait, on the waiting side)
    out.put(sp.wait);
    put_map(ctx, iv.map, out);
  }
  void waiting_value(SyncPoint& sp, SyncContext& ctx, Sym& out) override {
    if (is_scan(sp.kind)) return;
    out = ctx.reduce(cost_[ctx.current()], slot);
    const int l = ctx.location_of(sp);
    if (const double k = at(idle_, l, sp.enter); k > 0) {
      const double idle = k * sp.wait;
      out.add_lane(static_cast<int>(DelayKind::OmpIdle), idle);
      ctx.add_at(Metric::delay_ompidle, l, sp.callpath, -idle);
    }
    out.add_lane(static_cast<int>(DelayKind::OmpBarrier), at(barrier_, l, sp.enter) * sp.wait);
  }

  void cause_p2p(SyncPoint& sp, SyncContext& ctx, ByteReader& in) override {
    if (is_scan(sp.kind)) return;
    if (sp.kind == SyncKind::CollCause) {
      // The reference's interval since the previous point with every member
      // (the same for each member that waited at this instance).
      if (group_event_ != sp.event) {
        group_ = ctx.interval_with_all(ctx.current());
        group_event_ = sp.event;
      }
      explain(sp, ctx, in, group_.map, group_.waits, group_.start, group_.carried);
      return;
    }
    const auto iv = ctx.interval_with(ctx.current(), sp.peer);
    explain(sp, ctx, in, iv.map, iv.waits, iv.start, iv.carried);
  }
  void cause_earlier(SyncPoint& sp, SyncContext& ctx, ByteReader& in) override {
    const CarriedSend* s = ctx.earlier_send(sp);
    if (s == nullptr) return;
    // Its own waits lie in the window before, walked already: their causes
    // charge what they pass on after this walk.
    explain(sp, ctx, in, SyncContext::to_map(s->interval), s->interval.waits, ctx.current(), &s->interval);
  }

 private:
  // Stretches of a location's time with a value: a master's serial code
  // (its idle threads), a last thread's interval before an OpenMP barrier
  // (barrier waiting per second of its MPI waiting).  This epoch's, in
  // time order per location (contiguous ones of the same value joined).
  struct Stretch {
    std::int64_t begin, end;
    double value;
  };
  using Stretches = std::map<int, std::vector<Stretch>>;
  static void add_stretch(Stretches& s, int l, Stretch x) {
    auto& v = s[l];
    if (!v.empty() && v.back().end == x.begin && v.back().value == x.value) {
      v.back().end = x.end;
    } else {
      v.push_back(x);
    }
  }
  // The value at time `t` on location `l` (0: none).
  static double at(const Stretches& s, int l, std::int64_t t) {
    const auto it = s.find(l);
    if (it == s.end()) return 0;
    const auto& v = it->second;
    const auto p = std::upper_bound(v.begin(), v.end(), t, [](std::int64_t x, const Stretch& f) { return x < f.end; });
    return p != v.end() && p->begin <= t ? p->value : 0;
  }
  // The idleness is the master's code's cost first (delay_ompidle); its MPI
  // waits there pass their part on (waiting_value).
  void on_idle_cost(const IdleCostFinding& f, ReplayContext& ctx) {
    ctx.add_inclusive_at(Metric::delay_ompidle, f.location, f.callpath, f.seconds);
  }
  void on_idle_phase(const IdlePhaseFinding& f, ReplayContext&) {
    add_stretch(idle_, f.location, {f.begin, f.end, static_cast<double>(f.idle_threads)});
  }
  void on_barrier_cause(const BarrierCauseFinding& f, ReplayContext&) {
    // (Barrier intervals of one thread follow each other in time.)
    add_stretch(barrier_, f.location, {f.begin, f.end, f.factor});
  }

  // At a point where this rank caused the peer's wait: the peer's wait and
  // profile are in `in`, the costs it passes on are ctx.incoming(); `m` and
  // `w` are this rank's interval, which starts at point `j`, with `carried`
  // its part before the window (if any).
  void explain(SyncPoint& sp, SyncContext& ctx, ByteReader& in, const TimeMap& m, double w, std::size_t j,
               const CarriedMap* carried) {
    const double remote_wait = in.get<double>();
    const Remote& remote = get_map(in, remote_);
    const std::size_t k = ctx.current();
    // (Scratch vectors: a wait explained per synchronization point made two
    // heap blocks; copied below only where they are kept.)
    std::vector<double>& d = d_;
    d.assign(m.callpaths.size(), 0.0);
    double sum_d = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      d[i] = std::max(m.seconds[i] - lookup(remote, ctx.hash(m.callpaths[i])), 0.0);
      sum_d += d[i];
    }
    const double denom = sum_d + w;
    if (denom <= 0 || remote_wait <= 0) return;
    // (At a collective the members' shares are not capped: seed 000 sums
    // every member's wait over the reference's one profile.)
    const bool collective = sp.kind == SyncKind::CollCause;
    const double scale = collective ? remote_wait / denom : std::min(remote_wait / denom, 1.0);
    // A sub-pattern's share of the wait (Late Complete in Early Wait) is
    // charged to its own kind.
    const int kind = static_cast<int>(sp.delay), part_kind = static_cast<int>(sp.part_delay);
    const double part = std::clamp(sp.part, 0.0, 1.0);
    for (std::size_t i = 0; i < d.size(); ++i) {
      ctx.add(kShort[kind], m.callpaths[i], (1 - part) * scale * d[i]);
      if (part > 0) ctx.add(kShort[part_kind], m.callpaths[i], part * scale * d[i]);
    }
    // Long-term: cost_X / denom on each excess, once the costs are known.
    Sym costs = ctx.incoming(slot);
    auto& pts = ctx.points();
    for (std::size_t e = j + 1; e < k; ++e) {
      if (!ctx.counts_wait(e, k)) continue;  // (another thread's waits lie in its own intervals)
      SyncPoint& own = pts[e];
      cost_[e].add_lane(kind, (1 - part) * scale * own.wait);
      if (part > 0) cost_[e].add_lane(part_kind, part * scale * own.wait);
      cost_[e].add(costs, own.wait / denom);
      // (Propagating: a wait that caused a later wait through a point-to-point synchronization.)
      if (!collective) own.propagating = std::max(own.propagating, std::min(scale * own.wait, own.wait));
    }
    // The same for the own waits of the window before in its part before
    // the window (their causes charge them after the walk).
    // Those of older windows (a sum only) go nowhere: counted.
    auto pass_on = [&](Sym& c, double wait) {
      c.add_lane(kind, (1 - part) * scale * wait);
      if (part > 0) c.add_lane(part_kind, part * scale * wait);
      c.add(costs, wait / denom);
    };
    // (Waits nobody explains, and other threads' where their calls
    // overlapped, get nothing here, as in one epoch.)
    if (carried != nullptr) {
      const auto& named = ctx.carried_waits();
      double older = carried->explained;
      for (std::size_t e = carried->first; e < std::min<std::size_t>(carried->last, named.size()); ++e) {
        if (!explained_wait(named[e])) continue;
        older -= named[e].wait;
        if (ctx.concurrent() && named[e].location != ctx.location()) continue;
        pass_on(carried_cost_[e], named[e].wait);
      }
      if (older > 1e-12) pass_on(lost_, older);
    }
    // A later window may pass costs on to this wait (it ends in a part
    // carried across the cut): keep how this rank explained it.
    if (!ctx.ends_synchronized() && !ctx.last_window()) {
      kept_[{sp.peer, static_cast<int>(waiting_kind(sp.kind)), sp.seq, sp.epoch, sp.gid}] =
          Kept{ctx.location(), denom, {m.callpaths.begin(), m.callpaths.end()}, d, static_cast<std::uint32_t>(j),
               static_cast<std::uint32_t>(k), carried != nullptr ? carried->explained : 0.0, ctx.concurrent()};
    }
    sp.indirect = collective ? 0.0 : scale * w;  // the waiting side's share explained by our waiting
    if (costs.constant()) {
      charge_long(ctx, ctx.location(), m.callpaths, d, denom, costs);
    } else {
      open_.push_back({std::move(costs), ctx.location(), denom, open_d_.size()});
      open_callpaths_.insert(open_callpaths_.end(), m.callpaths.begin(), m.callpaths.end());
      open_d_.insert(open_d_.end(), d.begin(), d.end());
    }
  }
  // Long-term costs of one explained wait: `costs` (by kind) over the excess profile.
  // (Its call paths and excesses lie in open_callpaths_ and open_d_, from
  // `at` to the next one's: two heap blocks per wait otherwise.)
  struct Open {
    Sym costs;
    int location;  // the thread of the interval's call
    double denom;
    std::size_t at;
  };
  // An explained wait, kept for the next window: by the waiting side's
  // name (its world rank, SyncKind, seq, epoch, gid).
  using WaitKey = std::tuple<int, int, std::uint32_t, std::uint32_t, std::uint64_t>;
  struct Kept {
    int location;
    double denom;
    std::vector<std::uint32_t> callpaths;
    std::vector<double> d;
    std::uint32_t j, k;  // the interval's points: its own waits are the window's points in (j, k)
    double older;        // its own explained waits in its part before the window (a sum: not passed on)
    bool concurrent;     // the window's calls overlapped on several threads (only k's thread's waits count)
  };
  // How far costs that reach the window before go on there (each hop one
  // more exchange after the walk of a window that starts at a requested cut).
  static constexpr int kForwardRounds = 3;
  static void charge_long(SyncContext& ctx, int location, std::span<const std::uint32_t> callpaths,
                          std::span<const double> d, double denom, int kind, double cost) {
    const double cs = cost / denom;
    if (cs <= 0) return;
    for (std::size_t i = 0; i < d.size(); ++i) ctx.add_at(kLong[kind], location, callpaths[i], cs * d[i]);
  }
  static void charge_long(SyncContext& ctx, int location, std::span<const std::uint32_t> callpaths,
                          std::span<const double> d, double denom, const std::array<double, kMaxLanes>& costs) {
    for (int x = 0; x < kDelayKinds; ++x) {
      charge_long(ctx, location, callpaths, d, denom, x, costs[static_cast<std::size_t>(x)]);
    }
  }
  // (Only the kinds a wait passes on: a division per kind and wait was
  // 2 % of a wavefront's analysis.)
  static void charge_long(SyncContext& ctx, int location, std::span<const std::uint32_t> callpaths,
                          std::span<const double> d, double denom, const Sym& costs) {
    for (Sym::Lanes m = costs.used(); m != 0; m &= m - 1) {
      const int x = std::countr_zero(m);
      charge_long(ctx, location, callpaths, d, denom, x, costs.lane(x));
    }
  }

 public:
  Task<> end_walk(SyncContext& ctx) override {
    for (std::size_t i = 0; i < open_.size(); ++i) {
      const Open& o = open_[i];
      const std::size_t end = i + 1 < open_.size() ? open_[i + 1].at : open_d_.size();
      charge_long(ctx, o.location, std::span(open_callpaths_).subspan(o.at, end - o.at),
                  std::span(open_d_).subspan(o.at, end - o.at), o.denom, ctx.reduce(o.costs, slot));
    }
    open_.clear();
    // What the own waits of the window before received, to their causes.
    std::map<int, std::vector<CarriedCost>> to_causes;
    const auto& named = ctx.carried_waits();
    for (std::size_t e = 0; e < carried_cost_.size() && e < named.size(); ++e) {
      if (carried_cost_[e].zero()) continue;
      const CarriedWait& x = named[e];
      to_causes[x.cause].push_back({x.seq, x.epoch, x.gid, x.kind, 0, ctx.value(carried_cost_[e], slot)});
    }
    carried_cost_.clear();
    // Send each waiting rank the indirect share of its wait.
    struct Share {
      std::uint32_t seq;
      std::uint32_t kind;  // SyncKind of the waiting side
      std::uint32_t epoch;  // SyncPoint::epoch
      std::uint32_t pad;
      double indirect;
    };
    std::map<int, std::vector<Share>> back;
    for (const SyncPoint& sp : ctx.points()) {
      if (causes_p2p(sp.kind) && is_message_wait(waiting_kind(sp.kind)) && sp.indirect > 0) {
        back[sp.peer].push_back({sp.seq, static_cast<std::uint32_t>(waiting_kind(sp.kind)), sp.epoch, 0, sp.indirect});
      }
    }
    // (Sorted once and searched: a tree node per wait was 2-3 % of a
    // wavefront's analysis, bench_replay.)
    using ShareKey = std::tuple<int, int, std::uint32_t, std::uint32_t>;
    std::vector<std::pair<ShareKey, double>> indirect;
    std::map<int, std::vector<CarriedCost>> arrived;
    for (auto& [peer, lists] : co_await exchange_record_pairs(ctx.transport(), back, to_causes)) {
      for (const Share& x : lists.first) indirect.push_back({{peer, static_cast<int>(x.kind), x.seq, x.epoch}, x.indirect});
      if (!lists.second.empty()) arrived[peer] = std::move(lists.second);
    }
    std::stable_sort(indirect.begin(), indirect.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto indirect_of = [&indirect](const ShareKey& k) {  // (of equal keys the last, as a map assigned in order)
      auto it = std::upper_bound(indirect.begin(), indirect.end(), k,
                                 [](const ShareKey& key, const auto& e) { return key < e.first; });
      return it != indirect.begin() && std::prev(it)->first == k ? std::prev(it)->second : 0.0;
    };
    double unattributed = 0;
    for (double v : ctx.value(lost_, slot)) unattributed += v;
    lost_ = Sym{};
    // Costs for the window before: charged by the waits' causes, and their
    // share of the causes' own waits there goes on to those waits' causes.
    // Every rank takes the same number of exchanges (all know where the
    // window starts).
    for (int round = 0; !ctx.starts_synchronized(); ++round) {
      std::map<WaitKey, std::array<double, kMaxLanes>> next;
      for (const auto& [peer, list] : arrived) {
        for (const CarriedCost& x : list) {
          auto it = prev_kept_.find({peer, static_cast<int>(x.kind), x.seq, x.epoch, x.gid});
          if (it == prev_kept_.end()) continue;
          const Kept& k = it->second;
          charge_long(ctx, k.location, k.callpaths, k.d, k.denom, x.costs);
          double total = 0;
          for (double v : x.costs) total += v;
          double lost = k.older;
          for (std::uint32_t e = k.j + 1; e < k.k && e < prev_points_.size(); ++e) {
            const CarriedWait& o = prev_points_[e];
            if (!explained_wait(o) || (k.concurrent && o.location != k.location)) continue;
            if (round == kForwardRounds) {
              lost += o.wait;
              continue;
            }
            auto& c = next[{o.cause, static_cast<int>(o.kind), o.seq, o.epoch, o.gid}];
            for (int i = 0; i < kMaxLanes; ++i) {
              c[static_cast<std::size_t>(i)] += x.costs[static_cast<std::size_t>(i)] * o.wait / k.denom;
            }
          }
          unattributed += total * lost / k.denom;
        }
      }
      if (round == kForwardRounds) break;
      std::map<int, std::vector<CarriedCost>> out;
      for (const auto& [key, c] : next) {
        const auto& [cause, kind, seq, epoch, gid] = key;
        out[cause].push_back({seq, epoch, gid, static_cast<std::uint32_t>(kind), 0, c});
      }
      arrived = co_await exchange_records(ctx.transport(), out);
    }
    ctx.note_unattributed(unattributed);
    prev_kept_.clear();
    prev_points_.clear();
    if (!ctx.ends_synchronized() && !ctx.last_window()) {
      prev_kept_.swap(kept_);
      // Every point's wait by its cause's name (the kept intervals' own waits).
      for (const SyncPoint& p : ctx.points()) {
        prev_points_.push_back(wait_name(p, ctx.location_of(p), p.wait > 0 && !p.bound_only ? p.wait : 0.0));
      }
    }
    kept_.clear();
    for (SyncPoint& sp : ctx.points()) {
      if (!waits_p2p(sp) || !is_message_wait(sp.kind)) continue;
      sp.indirect = std::min(indirect_of({sp.peer, static_cast<int>(sp.kind), sp.seq, sp.epoch}), sp.wait);
      const bool ls = sp.kind != SyncKind::LrSend;
      const int l = ctx.location_of(sp);
      ctx.add_at(ls ? Metric::mpi_wait_indirect_ls : Metric::mpi_wait_indirect_lr, l, sp.callpath, sp.indirect);
      ctx.add_at(ls ? Metric::mpi_wait_direct_ls : Metric::mpi_wait_direct_lr, l, sp.callpath, sp.wait - sp.indirect);
      ctx.add_at(ls ? Metric::mpi_wait_propagating_ls : Metric::mpi_wait_propagating_lr, l, sp.callpath,
                 sp.propagating);
      ctx.add_at(ls ? Metric::mpi_wait_terminal_ls : Metric::mpi_wait_terminal_lr, l, sp.callpath,
                 sp.wait - sp.propagating);
    }
  }

 private:
  // Long-term costs for a wait of the window before (to its cause).
  struct CarriedCost {
    std::uint32_t seq, epoch;
    std::uint64_t gid;
    std::uint32_t kind, pad;
    std::array<double, kMaxLanes> costs;
  };
  static void put_map(SyncContext& ctx, const TimeMap& m, ByteWriter& out) {
    out.put(static_cast<std::uint32_t>(m.callpaths.size()));
    for (std::size_t i = 0; i < m.callpaths.size(); ++i) {
      out.put(ctx.hash(m.callpaths[i]));
      out.put(m.seconds[i]);
    }
  }
  // Profiles are short (the call paths of one interval): a vector searched
  // linearly beats a hash map here.
  using Remote = std::vector<std::pair<std::uint64_t, double>>;
  static const Remote& get_map(ByteReader& in, Remote& m) {
    m.clear();
    const auto n = in.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < n && in.ok(); ++i) {
      const auto h = in.get<std::uint64_t>();
      m.emplace_back(h, in.get<double>());
    }
    return m;
  }
  static double lookup(const Remote& m, std::uint64_t h) {
    double v = 0;
    for (const auto& [k, s] : m) v += k == h ? s : 0.0;
    return v;
  }

  Stretches idle_, barrier_;
  Remote remote_;          // explain's scratch: the waiting side's profile
  std::vector<double> d_;  // ... and this rank's excess per call path
  std::vector<Sym> cost_;  // per point: the long-term costs its wait passes on (known or symbolic)
  std::vector<Open> open_;  // explained waits whose costs were not known yet
  std::vector<std::uint32_t> open_callpaths_;
  std::vector<double> open_d_;
  std::vector<Sym> carried_cost_;  // per CarriedWait: the costs it passes on from this window
  Sym lost_;                       // ... and what older windows' waits in carried parts would get
  std::map<WaitKey, Kept> kept_, prev_kept_;  // explained in this window / the window before
  std::vector<CarriedWait> prev_points_;       // the window before's points (Kept::j, k index them)
  // The reference's interval at the collective instance being explained
  // (one per instance, however many members waited there).
  SyncContext::Interval group_;
  std::size_t group_event_ = SIZE_MAX;  // (reset at each walk)
};

}  // namespace

std::unique_ptr<Pattern> make_delay_costs() { return std::make_unique<DelayCosts>(); }

}  // namespace onlinews::analysis
