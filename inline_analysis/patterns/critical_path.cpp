// critical_path (seed 003 §III-B): each epoch's backward replay follows the
// path from the window's end back to its start.  The path stays on a rank
// until that rank reaches a synchronization point at which it waited; there
// it moves to the rank that caused the wait (the sender of a Late Sender, the
// receiver of a Late Receiver, the latest rank of a barrier or N x N, the root
// of a broadcast, the latest sender of a reduction, the latest lower rank of
// a scan, the call of another rank an RMA call waited for), at the moment the
// wait ended.  Every wait is a pair of ranks (sync_replay.hpp): the waiting
// rank hands on what it holds, the causing rank takes it over.  A rank
// holding the path books the exclusive time of its call paths over the
// segment it holds; the wait itself is never on the path, so the segments
// tile the window and their sum is its span.  The indicators are computed at MPI_Finalize
// (postpass/critical_path.cpp).
//
// Where the path ends.  A window that ends in a synchronizing cut ends on the
// rank that entered that collective last (every rank knows it).  A window
// that ends at a requested cut does not say: the path there is the one that
// the *next* window's path continues.  So every rank starts such a walk
// holding a candidate of its own (a bit of a 64-bit mask; with more than 64
// ranks, rank 0 holds the only one and the epoch is approximate).  Tokens
// travel as masks and merge where paths meet, each rank books its segments
// per mask, and after the walk one reduction tells every rank which rank
// holds each candidate at the window's start.  An epoch's pieces are booked
// once the holder at its end is known: at once for a synchronizing end, or
// as soon as a later epoch's candidates all lead back to one rank (paths
// from different ends meet quickly in practice); MPI_Finalize ends with a
// synchronizing cut, so every epoch is booked by then.  Pieces are booked
// into the epoch that resolves them (the run's totals are exact).
//
// Messages across a requested cut.  A receive that waited for a send of
// the window before and completed after the cut has the path, going back,
// on the receiver down to the send and then on the sender at its send --
// not at the cut: between the send and the cut the sender may have waited
// for someone else, and the path at the cut may lead there.  So a walk
// that ends at a requested cut also starts a candidate at each of its
// latest sends still unreceived (spare bits of the mask: (64 - n) / n per
// rank), taken over at the send's enter.  In the next window the receiver
// hands what it holds at such a receive to the sender's LsSendEarlier
// point, which names that send's candidate as their holder at the window's
// start, and the receiver books its part from the send to the cut.  Where
// the sender started no candidate (more such sends than bits, a receive
// two windows later, 33 or more ranks, MPI calls of several threads that
// overlapped), the path goes to the sender at the cut, and the receiver's
// part before the cut is counted as approximate.  (The masks, the send
// candidates and the epochs waiting for their end: path_candidates.hpp.)
//
// Threads.  The path has one position per rank.  Where MPI calls of
// different threads overlapped in time (MPI_THREAD_MULTIPLE), it leaves the
// rank only at waits of the thread it is on, and a path arriving at another
// thread's call while the rank may hold one stays on the thread it holds
// (the waits between threads -- joins, locks -- are not seen).
// A segment on a thread that waited at an OpenMP barrier runs,
// over its interval before that barrier, on the team's last thread to
// arrive (BarrierPassFinding, omp_barrier.cpp): the thread's own waiting is
// never on the path, the last thread's work is.
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "path_candidates.hpp"

namespace onlinews::analysis {
namespace {

using path::kAll;
using path::kCandidates;
using path::Mask;
using path::mask_of;
using path::sym_of;
using Piece = path::PendingEpochs::Piece;

class CriticalPath final : public Pattern, public SyncHandler {
 public:
  void subscribe(Dispatch& d) override {
    d.on_sync(this);
    d.on_finding(this, &CriticalPath::on_barrier_pass);
  }
  void on_epoch_end(ReplayContext&) override { passes_.clear(); }
  // The candidates a waiting rank hands over depend on what reached it at
  // its later points: symbolic.
  int lanes() const override { return 2; }
  // The sends of the window before whose receive waited in this one are
  // points of this walk only where the replay keeps them across requested
  // cuts, with the intervals (LsSendEarlier; the header).
  bool uses_intervals() const override { return true; }

  void begin_walk(SyncContext& ctx) override {
    segments_.clear();
    held_before_.clear();
    early_segments_.clear();
    send_claims_.clear();
    sends_.begin(ctx, !ctx.ends_synchronized() && !ctx.concurrent());
    incs_.clear();
    run_ = 0;
    Mask m = 0;
    bool ended_here = false, tail_only = false;
    std::int64_t end = ctx.window_end();
    if (ctx.ends_synchronized()) {
      // The path ends on the rank that entered the last collective spanning
      // all ranks last (a synchronizing window ends with one), where it
      // entered.  The window ends at each rank's own Leave, the next one
      // starts there: the collective's completion, from the last enter to
      // the Leave, is the next window's, on whichever rank holds the path at
      // its start (as in one epoch, where the path runs back through that
      // rank's completion to the last enter; end_walk).
      const CutCollective cut = ctx.ending_collective();
      if (cut.point != 0) {
        const SyncPoint& sp = ctx.points()[cut.point];
        const CommDef* c = ctx.defs().comm(sp.comm);
        if (c != nullptr && c->world_rank_of(sp.reference) == ctx.world_rank()) m = kAll;
        // (Nothing follows the last window: the end holder's completion, to the first Leave.)
        end = ctx.last_window() ? std::max(sp.enter, std::min(end, sp.min_leave)) : cut.completion_from;
        ended_here = m == kAll;
      } else if (ended_holding_ && ctx.starting_collective().callpath != kNoCallpath) {
        // A synchronized window without such a collective (a run's tail
        // after the cut at its last one): the path ends where it ended
        // before, with that collective's completion (nothing of the tail
        // is on the path: its waits hand nothing over).
        m = kAll;
        end = ctx.window_begin();
        tail_only = true;
      }
    } else if (ctx.world_size() <= kCandidates) {
      m = Mask{1} << ctx.world_rank();
    } else if (ctx.world_rank() == 0) {
      m = kAll;
    }
    ended_holding_ = ended_here;
    tail_only_ = tail_only;
    if (m != 0) incs_.push_back(sym_of(m));
    segment_end_ = end;
    segment_location_ = ctx.last_location();
    window_begin_ = ctx.window_begin();
  }

  void waiting_p2p(SyncPoint&, SyncContext&, ByteWriter&) override {}  // (all of it is the value)

  void waiting_value(SyncPoint& sp, SyncContext& ctx, Sym& out) override {
    // (Where threads called MPI concurrently, another thread's wait is not
    // on the path the rank holds: the path has one position per rank.)
    start_send_candidates(static_cast<std::int64_t>(sp.event));
    if (!holding() || tail_only_ || (ctx.concurrent() && ctx.location() != segment_location_)) return;
    const std::int64_t wait_end = sp.enter + static_cast<std::int64_t>(sp.wait * 1e9);
    if (sp.kind == SyncKind::LsRecvEarlier) {
      // A wait for a send of the earlier window (the header): the sender's
      // candidate for that send takes over what this rank holds, if it
      // started one (else the sender at the cut: held_before_), and this
      // rank's part from the send to the cut is booked once that is known
      // (end_walk).
      if (wait_end < ctx.window_begin()) {
        early_segments_.push_back({wait_end, ctx.window_begin(), run_, incs_.size(), ctx.location(), sp.callpath});
      }
      out = held(ctx);
      hand_over_before(sp, ctx);
      return;
    }
    // A wait that ended before the window's start (a send of the earlier
    // window, below; a requested cut inside a collective's completion, its
    // last member entered before the cut): the path goes to the cause at
    // the start and the earlier window's path ends there, so the time from
    // the wait's end to the cut is the cause's instead of this rank's.
    // Counted (every rank holding its own candidate counts its own).
    if (wait_end < ctx.window_begin()) ctx.note_approximate_path(secs(ctx.window_begin() - wait_end));
    if (sp.kind == SyncKind::LrSend && wait_end < ctx.window_begin()) {
      // A send that waited across the cut for a receive posted before it:
      // the path leaves here where the wait ended (before this window's
      // start) for the receiver, which has no point for that posting in
      // this window (it was walked already): at the window's start the
      // receiver holds it (the earlier window's end holder).
      // (The receiver's path from the cut back stands for its path from
      // the posting back: counted.)
      hand_over_before(sp, ctx);
      return;
    }
    out = held(ctx);
    hand_over(sp);
  }

  void cause_p2p(SyncPoint& sp, SyncContext& ctx, ByteReader&) override {
    start_send_candidates(static_cast<std::int64_t>(sp.event));
    Sym m = ctx.incoming(slot);
    // (Where threads called MPI concurrently, a path arriving on another
    // thread joins the one this rank may hold, on its thread.)
    const bool stay = ctx.concurrent() && holding();
    if (!m.zero()) take_over(sp.enter, stay ? segment_location_ : ctx.location(), std::move(m));
  }

  // A send of the window before whose receive waited for it in this one
  // (walked last): what the receiver held there goes to the candidate this
  // rank started at the send, if it did (the header).
  void cause_earlier(SyncPoint& sp, SyncContext& ctx, ByteReader&) override {
    start_send_candidates(static_cast<std::int64_t>(sp.event));
    const int c = sends_.of_earlier(sp);
    if (c < 0) return;
    Sym m = ctx.incoming(slot);
    if (!m.zero()) send_claims_.push_back({c, std::move(m)});
  }

  Task<> end_walk(SyncContext& ctx) override {
    start_send_candidates(-1);  // (sends before every point)
    if (holding()) {
      add_segment(ctx.window_begin(), segment_end_);
      // The completion of the collective that ended the window before (see
      // begin_walk), on its call path.
      const CutCollective& c = ctx.starting_collective();
      if (c.callpath != kNoCallpath && c.completion_from < ctx.window_begin()) {
        segment_location_ = c.location;  // (the collective's thread)
        add_segment(c.completion_from, ctx.window_begin(), c.callpath);
      }
    }
    // Every value is known now.  The masks of one run are disjoint, so the
    // sum of a run's first increments is their union: prefix sums (mod
    // 2^64, exact for differences within a run) give every segment's.
    std::vector<Mask> sum(incs_.size() + 1, 0);
    for (std::size_t i = 0; i < incs_.size(); ++i) sum[i + 1] = sum[i] + mask_of(ctx.value(incs_[i], slot));
    auto mask = [&sum](std::size_t b, std::size_t e) { return sum[e] - sum[b]; };
    const Mask start_mask = mask(run_, incs_.size());  // the candidates held at the window's start
    for (const Segment& g : segments_) {
      const Mask m = mask(g.begin, g.end);
      if (m == 0) continue;
      if (g.callpath != kNoCallpath) {
        pieces_.push_back({m, g.location, g.callpath, static_cast<double>(g.t1 - g.t0) * 1e-9});
      } else {
        add_pieces(ctx, m, g.location, g.t0, g.t1);
      }
    }
    segments_.clear();
    std::map<int, Mask> held_before;  // rank or send candidate -> the candidates it holds at the start
    for (const auto& [rank, b, e] : held_before_) held_before[rank] |= mask(b, e);
    for (const auto& [c, m] : send_claims_) held_before[c] |= mask_of(ctx.value(m, slot));
    std::vector<Mask> early(early_segments_.size());
    for (std::size_t i = 0; i < early.size(); ++i) early[i] = mask(early_segments_[i].begin, early_segments_[i].end);
    incs_.clear();
    run_ = 0;
    path::PendingEpochs::Epoch e;
    // One value per (mask, call path): what a pending epoch keeps.
    std::sort(pieces_.begin(), pieces_.end(), [](const Piece& a, const Piece& b) {
      return std::tie(a.mask, a.location, a.callpath) < std::tie(b.mask, b.location, b.callpath);
    });
    for (const Piece& p : pieces_) {
      if (!e.pieces.empty() && e.pieces.back().mask == p.mask && e.pieces.back().location == p.location &&
          e.pieces.back().callpath == p.callpath) {
        e.pieces.back().seconds += p.seconds;
      } else {
        e.pieces.push_back(p);
      }
    }
    pieces_.clear();
    e.ends_synchronized = ctx.ends_synchronized() || ctx.world_size() > kCandidates;
    // Which rank holds each candidate at the window's start: needed to find
    // the path's end in the epochs before this one (all ranks know whether
    // any is pending: the decisions below are the same everywhere).
    if (!e.ends_synchronized || !epochs_.empty()) {
      std::array<double, kCandidates> start{};
      for (int c = 0; c < kCandidates; ++c) {
        start[c] = (start_mask >> c) & 1 ? ctx.world_rank() + 1.0 : 0.0;
        for (const auto& [rank, m] : held_before) {
          if ((m >> c) & 1) start[c] = rank + 1.0;
        }
      }
      co_await ctx.transport().allreduce_max(start.data(), start.size());
      for (int c = 0; c < kCandidates; ++c) e.start_holder[c] = static_cast<int>(start[c]) - 1;
    }
    // A receiver's part from a send of the window before to the cut: on the
    // path of the candidates that a send's candidate took over (a holder
    // beyond the ranks; the header), approximate for the others.
    Mask at_sends = 0;  // the candidates a send's candidate holds at the start
    for (int c = 0; c < kCandidates; ++c) {
      if (e.start_holder[c] >= ctx.world_size()) at_sends |= Mask{1} << c;
    }
    for (std::size_t i = 0; i < early.size(); ++i) {
      const Segment& g = early_segments_[i];
      const Mask exact = early[i] & at_sends;
      const double seconds = secs(g.t1 - g.t0);
      if (exact != 0) e.pieces.push_back({exact, g.location, g.callpath, seconds});
      if ((early[i] & ~exact) != 0) ctx.note_approximate_path(seconds);
    }
    epochs_.add(std::move(e), ctx);
  }

 private:
  // The walk has passed every point after `event`: the candidates of sends
  // after it start at their enter.
  void start_send_candidates(std::int64_t event) {
    sends_.start_after(event, [this](std::int64_t at, int location, int c) {
      take_over(at, location, sym_of(Mask{1} << c));
    });
  }
  // The path leaves this rank where its wait at `sp` ended (a call that
  // began before the window may have ended waiting before it too: the
  // window before booked that part, add_segment).
  void hand_over(const SyncPoint& sp) {
    add_segment(sp.enter + static_cast<std::int64_t>(sp.wait * 1e9), segment_end_);
    run_ = incs_.size();
  }
  // ... where its wait ended before the window's start, for a rank of the
  // window before (`sp.peer`), which holds it there unless a send's
  // candidate claims it (the header).
  void hand_over_before(const SyncPoint& sp, SyncContext& ctx) {
    if (sp.peer >= 0 && sp.peer < ctx.world_size()) held_before_.push_back({sp.peer, run_, incs_.size()});
    hand_over(sp);
  }
  // Paths arriving at `at` continue on this rank: whatever held it from
  // `at` on keeps its segment, and from `at` back they are one.
  // (A segment lies on the thread of the call at its end.)
  void take_over(std::int64_t at, int location, Sym incoming) {
    if (holding()) add_segment(at, segment_end_);
    incs_.push_back(std::move(incoming));
    segment_end_ = at;
    segment_location_ = location;
  }
  // The segment [t0, t1] the current run's candidates hold, booked once
  // they are known.
  // A call that spans a requested cut keeps its Enter in the earlier
  // window, whose path books it up to the cut; the later window sees the
  // call's enter before its start and books only from there.  Only the
  // completion of the collective that ended a synchronized window before
  // (a segment with its call path) is booked before the start.
  void add_segment(std::int64_t t0, std::int64_t t1, std::uint32_t callpath = kNoCallpath) {
    if (callpath == kNoCallpath) t0 = std::max(t0, window_begin_);
    if (t1 > t0) segments_.push_back({t0, t1, run_, incs_.size(), segment_location_, callpath});
  }
  // Whether this rank may hold candidates (increments since the last
  // hand-over), and which (reduced: what is known so far substituted).
  bool holding() const { return incs_.size() > run_; }
  Sym held(SyncContext& ctx) const {
    Sym s;
    for (std::size_t i = run_; i < incs_.size(); ++i) s.add(incs_[i]);
    return ctx.reduce(s, slot);
  }
  // OpenMP barriers some thread waited at in this epoch, by that thread, in
  // time order.
  void on_barrier_pass(const BarrierPassFinding& f, ReplayContext&) {
    auto& v = passes_[f.location];
    const auto at = std::upper_bound(v.begin(), v.end(), f.begin,
                                     [](std::int64_t t, const BarrierPassFinding& p) { return t < p.begin; });
    v.insert(at, f);
  }
  // The pieces of the path over [t0, t1) on `location`: its own time, but
  // the last thread's where it waited at an OpenMP barrier.
  void add_pieces(SyncContext& ctx, Mask m, int location, std::int64_t t0, std::int64_t t1) {
    auto add = [&](int l, std::int64_t a, std::int64_t b) {
      if (b <= a) return;
      const TimeMap tm = ctx.time_map_on(l, a, b);
      for (std::size_t i = 0; i < tm.callpaths.size(); ++i) pieces_.push_back({m, l, tm.callpaths[i], tm.seconds[i]});
    };
    std::int64_t t = t0;
    if (const auto it = passes_.find(location); it != passes_.end()) {
      for (const BarrierPassFinding& p : it->second) {
        if (p.end <= t || p.begin >= t1) continue;
        const std::int64_t b = std::max(p.begin, t), e = std::min(p.end, t1);
        add(location, t, b);
        add(p.last, b, e);
        t = e;
      }
    }
    add(location, t, t1);
  }
  std::map<int, std::vector<BarrierPassFinding>> passes_;

  // The candidates this rank holds at the walk's position are the sum of
  // the increments since its last hand-over (incs_[run_, end)): one per
  // path that reached it, often still symbolic.  Segments refer to a
  // prefix of a run, so the walk stays linear however long a run grows.
  struct Segment {
    std::int64_t t0, t1;
    std::size_t begin, end;  // its candidates: the sum of incs_[begin, end)
    int location;            // the thread it lies on
    std::uint32_t callpath;  // all of it on this call path (kNoCallpath: the events' own)
  };
  bool ended_holding_ = false;  // the window before ended on this rank, synchronized
  bool tail_only_ = false;      // this window holds only that end's completion
  std::vector<Sym> incs_;
  std::size_t run_ = 0;
  std::int64_t segment_end_ = 0;
  std::int64_t window_begin_ = 0;  // nothing before it is booked (add_segment)
  int segment_location_ = 0;
  std::vector<Segment> segments_;  // this walk's segments, their candidates maybe still open
  std::vector<Piece> pieces_;      // ... booked per call path
  // Candidates that left for a rank of the earlier window (its sender, its receiver).
  std::vector<std::tuple<int, std::size_t, std::size_t>> held_before_;
  path::PendingEpochs epochs_;    // epochs whose end holder is not known yet, and the one after
  path::SendCandidates sends_;
  // A send's candidate of the window before, and the candidates it took over.
  std::vector<std::pair<int, Sym>> send_claims_;
  std::vector<Segment> early_segments_;            // receivers' parts before the window (their candidates in incs_)
};

}  // namespace

std::unique_ptr<Pattern> make_critical_path() { return std::make_unique<CriticalPath>(); }

}  // namespace onlinews::analysis
