// critical_path (seed 003 §III-B): each epoch's backward replay follows the
// path from the window's end back to its start.  The path stays on a rank
// until that rank reaches a synchronization point at which it waited; there
// it moves to the rank that caused the wait (the sender of a Late Sender, the
// receiver of a Late Receiver, the latest rank of a barrier or N x N, the root
// of a broadcast, the latest sender of a reduction, the latest lower rank of
// a scan), at the moment the wait ended.  A rank holding the path books the
// exclusive time of its call paths over the segment it holds; the wait itself
// is never on the path, so the segments tile the window and their sum is its
// span.  The indicators are computed at MPI_Finalize
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
#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <optional>

#include "../sync_replay.hpp"

namespace onlinews::analysis {
namespace {

using Mask = std::uint64_t;
constexpr Mask kAll = ~Mask{0};
constexpr int kCandidates = 64;
// Epochs waiting for their end holder.  Ranks that never wait keep their
// candidates to themselves (a pipeline's upstream stages), so epochs may
// wait until the next synchronizing cut: a pending epoch keeps one value
// per (mask, call path), a few dozen bytes in practice.
constexpr std::size_t kMaxPending = 4096;

// A mask as two exactly representable doubles (collective sums of disjoint
// masks equal their union).
void put_mask(std::vector<double>& v, Mask m) {
  v.push_back(static_cast<double>(m & 0xffffffffu));
  v.push_back(static_cast<double>(m >> 32));
}
Mask get_mask(const double*& p) {
  const Mask m = static_cast<Mask>(p[0]) | (static_cast<Mask>(p[1]) << 32);
  p += 2;
  return m;
}

class CriticalPath final : public Pattern, public SyncHandler {
 public:
  void subscribe(Dispatch& d) override { d.on_sync(this); }

  void begin_walk(SyncContext& ctx) override {
    pieces_.clear();
    held_before_.clear();
    mask_ = 0;
    std::int64_t end = ctx.window_end();
    if (ctx.ends_synchronized()) {
      // The path ends on the rank that entered the last collective spanning
      // all ranks last (a synchronizing window ends with one).
      const auto& pts = ctx.points();
      for (std::size_t k = pts.size(); k-- > 1;) {
        const SyncPoint& sp = pts[k];
        if (sp.kind != SyncKind::Collective || !sp.all_ranks) continue;
        const CommDef* c = ctx.defs().comm(sp.comm);
        if (c != nullptr && c->world_rank_of(sp.reference) == ctx.world_rank()) mask_ = kAll;
        // The window ends at each rank's own Leave, the next one starts
        // there.  The path continues from whichever rank holds it at the
        // next start, so it ends here at the first Leave: the end holder's
        // later completion would overlap the next window's path.
        end = std::max(sp.enter, std::min(end, sp.min_leave));
        break;
      }
    } else if (ctx.world_size() <= kCandidates) {
      mask_ = Mask{1} << ctx.world_rank();
    } else if (ctx.world_rank() == 0) {
      mask_ = kAll;
    }
    segment_end_ = end;
  }

  void waiting_p2p(SyncPoint& sp, SyncContext& ctx, ByteWriter& out) override {
    out.put(mask_);
    if (mask_ != 0) hand_over(sp, ctx);
  }

  // A wait for a send of the earlier window: the path leaves here where
  // the wait ended (before this window's start) for the sender, so at the
  // window's start the sender holds it (the earlier window's end holder).
  void waiting_earlier(SyncPoint& sp, SyncContext& ctx, ByteWriter&) override {
    if (mask_ == 0) return;
    const Mask m = mask_;
    book(ctx, std::max(sp.enter + static_cast<std::int64_t>(sp.wait * 1e9), ctx.window_begin()), segment_end_, m);
    mask_ = 0;
    if (sp.peer >= 0 && sp.peer < ctx.world_size()) held_before_[sp.peer] |= m;
  }

  void cause_p2p(SyncPoint& sp, SyncContext& ctx, ByteReader& in) override {
    const Mask m = in.get<Mask>();
    if (m != 0) take_over(ctx, sp.enter, m);
  }

  void reference_out(SyncPoint&, SyncContext&, ByteWriter&) override {}

  void member_contribute(SyncPoint& sp, SyncContext& ctx, ByteReader&, std::vector<double>& out) override {
    const CommDef* c = ctx.defs().comm(sp.comm);
    const bool gives = mask_ != 0 && sp.wait > 0 && c != nullptr && c->my_rank != sp.reference;
    put_mask(out, gives ? mask_ : 0);
    if (gives) hand_over(sp, ctx);
  }

  void reference_in(SyncPoint& sp, SyncContext& ctx, const double*& sum) override {
    const Mask m = get_mask(sum);
    if (m != 0) take_over(ctx, sp.enter, m);
  }

  // At a Scan the path moves from a waiting holder to its latest
  // predecessor: every member votes a mask for every member (by comm rank).
  void scan_vote(SyncPoint& sp, SyncContext& ctx, std::vector<double>& votes) override {
    const CommDef* c = ctx.defs().comm(sp.comm);
    const int n = c != nullptr ? c->size : 0;
    const std::size_t base = votes.size();
    votes.resize(base + 2 * static_cast<std::size_t>(n), 0.0);
    int to = -1;
    for (int r = 0; r < n && sp.peer >= 0; ++r) to = c->world_rank_of(r) == sp.peer ? r : to;
    if (mask_ == 0 || sp.wait <= 0 || to < 0 || sp.peer == ctx.world_rank()) return;
    std::vector<double> m;
    put_mask(m, mask_);
    votes[base + 2 * static_cast<std::size_t>(to)] = m[0];
    votes[base + 2 * static_cast<std::size_t>(to) + 1] = m[1];
    hand_over(sp, ctx);
  }
  void scan_result(SyncPoint& sp, SyncContext& ctx, const double*& votes) override {
    const CommDef* c = ctx.defs().comm(sp.comm);
    const int n = c != nullptr ? c->size : 0;
    const double* mine = votes + 2 * static_cast<std::size_t>(c != nullptr ? c->my_rank : 0);
    const Mask m = n > 0 ? get_mask(mine) : 0;
    if (m != 0) take_over(ctx, sp.enter, m);
    votes += 2 * static_cast<std::size_t>(n);
  }

  Task<> end_walk(SyncContext& ctx) override {
    if (mask_ != 0) book(ctx, ctx.window_begin(), segment_end_, mask_);
    Epoch e;
    // One value per (mask, call path): what a pending epoch keeps.
    std::sort(pieces_.begin(), pieces_.end(), [](const Piece& a, const Piece& b) {
      return a.mask != b.mask ? a.mask < b.mask : a.callpath < b.callpath;
    });
    for (const Piece& p : pieces_) {
      if (!e.pieces.empty() && e.pieces.back().mask == p.mask && e.pieces.back().callpath == p.callpath) {
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
    if (!e.ends_synchronized || !pending_.empty()) {
      std::array<double, kCandidates> start{};
      for (int c = 0; c < kCandidates; ++c) {
        start[c] = (mask_ >> c) & 1 ? ctx.world_rank() + 1.0 : 0.0;
        for (const auto& [rank, m] : held_before_) {
          if ((m >> c) & 1) start[c] = rank + 1.0;
        }
      }
      co_await ctx.transport().allreduce_max(start.data(), start.size());
      for (int c = 0; c < kCandidates; ++c) e.start_holder[c] = static_cast<int>(start[c]) - 1;
    }
    pending_.push_back(std::move(e));
    resolve(ctx);
    mask_ = 0;
  }

 private:
  struct Piece {
    Mask mask;
    std::uint32_t callpath;
    double seconds;
  };
  struct Epoch {
    Epoch() { start_holder.fill(-1); }
    std::vector<Piece> pieces;
    std::array<int, kCandidates> start_holder;  // candidate -> rank holding it at the start (-1: none)
    bool ends_synchronized = false;
    std::optional<int> end_holder;  // the candidate that holds the path at the end
  };

  // The path leaves this rank where its wait at `sp` ended.
  void hand_over(const SyncPoint& sp, SyncContext& ctx) {
    book(ctx, sp.enter + static_cast<std::int64_t>(sp.wait * 1e9), segment_end_, mask_);
    mask_ = 0;
  }
  // Paths arriving at `at` continue on this rank: whatever held it from
  // `at` on keeps its segment, and from `at` back they are one.
  void take_over(SyncContext& ctx, std::int64_t at, Mask incoming) {
    if (mask_ != 0) book(ctx, at, segment_end_, mask_);
    mask_ |= incoming;
    segment_end_ = at;
  }
  void book(SyncContext& ctx, std::int64_t t0, std::int64_t t1, Mask m) {
    const TimeMap tm = ctx.time_map(t0, t1);
    for (std::size_t i = 0; i < tm.callpaths.size(); ++i) pieces_.push_back({m, tm.callpaths[i], tm.seconds[i]});
  }

  // Books every epoch whose end holder is known now, newest first: the
  // holder at an epoch's end is the rank holding the next epoch's path at
  // that epoch's start.
  void resolve(SyncContext& ctx) {
    Epoch& newest = pending_.back();
    if (newest.ends_synchronized) newest.end_holder = 0;  // one token, all bits
    for (std::size_t i = pending_.size(); i-- > 0;) {
      Epoch& e = pending_[i];
      if (i > 0 && !pending_[i - 1].end_holder) {
        // The epoch before ends where this one's path starts: known if this
        // one's end is, or if all of its candidates lead to the same rank.
        std::optional<int> only;
        bool same = true;
        for (int c = 0; c < kCandidates; ++c) {
          const int h = e.start_holder[c];
          if (h < 0) continue;
          if (!only) only = h;
          same = same && *only == h;
        }
        if (e.end_holder) {
          pending_[i - 1].end_holder = e.start_holder[*e.end_holder];
        } else if (same && only) {
          pending_[i - 1].end_holder = *only;
        }
      }
    }
    // Far too many epochs waiting (candidates that never meet, and no
    // synchronizing cut): take the oldest one's end from rank 0 (approximate).
    if (pending_.size() > kMaxPending && !pending_.front().end_holder) pending_.front().end_holder = 0;
    for (auto& e : pending_) {
      if (!e.end_holder || e.pieces.empty()) continue;
      const int h = *e.end_holder;
      for (const Piece& p : e.pieces) {
        if (h >= 0 && ((p.mask >> h) & 1)) ctx.add(Metric::critical_path, p.callpath, p.seconds);
      }
      e.pieces.clear();
    }
    // An epoch is resolved when its successor is (or when the successor's
    // candidates all met), so the resolved ones are the oldest: drop them,
    // keep the rest for the epochs to come.
    while (!pending_.empty() && pending_.front().end_holder) pending_.pop_front();
  }

  Mask mask_ = 0;
  std::int64_t segment_end_ = 0;
  std::vector<Piece> pieces_;     // this walk's segments
  std::map<int, Mask> held_before_;  // candidates that left for a sender of the earlier window
  std::deque<Epoch> pending_;     // epochs whose end holder is not known yet, and the one after
};

}  // namespace

std::unique_ptr<Pattern> make_critical_path() { return std::make_unique<CriticalPath>(); }

}  // namespace onlinews::analysis
