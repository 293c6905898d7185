// The critical path's candidates across requested cuts (critical_path.cpp
// says how the walk uses them): masks of 64 candidates, the candidates a
// walk starts at its sends whose receive lies in a later window, and the
// epochs waiting until the holder at their end is known.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "../sync_replay.hpp"

namespace onlinews::analysis::path {

using Mask = std::uint64_t;
constexpr Mask kAll = ~Mask{0};
constexpr int kCandidates = 64;

// A mask as two exactly representable doubles of 32 bits each, as a
// symbolic value (sym.hpp): masks that meet are disjoint, so their sum is
// their union.
inline Sym sym_of(Mask m) {
  Sym s;
  s.add_lane(0, static_cast<double>(m & 0xffffffffu));
  s.add_lane(1, static_cast<double>(m >> 32));
  return s;
}
inline Mask mask_of(const std::array<double, kMaxLanes>& v) {
  return static_cast<Mask>(v[0]) | (static_cast<Mask>(v[1]) << 32);
}

// Candidates started at sends.  A walk that ends at a requested cut starts
// one at each of its latest sends without a receive in its window, (64 -
// n) / n per rank (the bits above the ranks'), each taken over at the
// send's enter as the walk passes it.  The next window's walk asks which
// candidate a send of the window before had (its LsSendEarlier point).
class SendCandidates {
 public:
  // At a walk's start: this rank's candidates of the walk before become
  // the earlier ones; a walk that ends at a requested cut (`start`) starts
  // its own.
  void begin(SyncContext& ctx, bool start) {
    earlier_ = std::move(by_send_);
    earlier_epoch_ = epoch_;
    by_send_.clear();
    starts_.clear();
    epoch_ = ctx.epoch();
    const int n = ctx.world_size();
    const int per_rank = n <= kCandidates ? (kCandidates - n) / n : 0;
    const auto& crossing = ctx.crossing_sends();
    if (!start || per_rank == 0 || crossing.empty()) return;
    std::vector<const CrossingSend*> latest;
    latest.reserve(crossing.size());
    for (const CrossingSend& x : crossing) latest.push_back(&x);
    auto later = [](const CrossingSend* a, const CrossingSend* b) { return a->event > b->event; };
    if (latest.size() > static_cast<std::size_t>(per_rank)) {
      std::nth_element(latest.begin(), latest.begin() + per_rank, latest.end(), later);
      latest.resize(static_cast<std::size_t>(per_rank));
    }
    std::sort(latest.begin(), latest.end(), later);
    int c = n + ctx.world_rank() * per_rank;
    SyncPoint at;
    for (auto it = latest.rbegin(); it != latest.rend(); ++it) {  // (earliest first: taken from the back)
      at.event = (*it)->event;
      starts_.push_back({(*it)->enter, (*it)->event, ctx.location_of(at), c});
      by_send_[{(*it)->dest, (*it)->seq}] = c++;
    }
  }
  // The walk has passed every point after event `after` (-1: all): calls
  // take(enter, location, candidate) for the sends after it, latest first.
  template <class Take>
  void start_after(std::int64_t after, Take&& take) {
    while (!starts_.empty() && static_cast<std::int64_t>(starts_.back().event) > after) {
      const Start s = starts_.back();
      starts_.pop_back();
      take(s.enter, s.location, s.candidate);
    }
  }
  // The candidate this rank started at the send of LsSendEarlier point
  // `sp` in the window before (-1: none).
  int of_earlier(const SyncPoint& sp) const {
    if (sp.epoch != earlier_epoch_) return -1;
    const auto it = earlier_.find({sp.peer, sp.seq});
    return it == earlier_.end() ? -1 : it->second;
  }

 private:
  struct Start {
    std::int64_t enter;
    std::size_t event;
    int location;
    int candidate;
  };
  std::vector<Start> starts_;  // this walk's not passed yet, earliest first (taken from the back)
  // (dest, seq) -> candidate: this walk's, the one before's.
  std::map<std::pair<int, std::uint32_t>, int> by_send_, earlier_;
  std::uint32_t epoch_ = 0, earlier_epoch_ = UINT32_MAX;
};

// Epochs waiting for their end holder.  Ranks that never wait keep their
// candidates to themselves (a pipeline's upstream stages), so epochs may
// wait until the next synchronizing cut: a pending epoch keeps one value
// per (mask, call path), a few dozen bytes in practice.
class PendingEpochs {
 public:
  static constexpr std::size_t kMaxPending = 4096;
  struct Piece {
    Mask mask;
    int location;
    std::uint32_t callpath;
    double seconds;
  };
  struct Epoch {
    Epoch() { start_holder.fill(-1); }
    std::vector<Piece> pieces;
    // candidate -> the candidate of the epoch before that holds it at the
    // start (a rank's, or one started at a send; -1: none)
    std::array<int, kCandidates> start_holder;
    bool ends_synchronized = false;
    std::optional<int> end_holder;  // the candidate that holds the path at the end
  };
  // Whether an epoch waits (the newest one's start holders are needed).
  bool empty() const { return pending_.empty(); }
  // Adds the newest epoch, and books every epoch whose end holder is known
  // now, newest first: the holder at an epoch's end is the one holding the
  // next epoch's path at that epoch's start.
  void add(Epoch e, SyncContext& ctx) {
    pending_.push_back(std::move(e));
    Epoch& newest = pending_.back();
    if (newest.ends_synchronized) newest.end_holder = 0;  // one candidate, all bits
    for (std::size_t i = pending_.size(); i-- > 0;) {
      Epoch& e = pending_[i];
      if (i > 0 && !pending_[i - 1].end_holder) {
        // The epoch before ends where this one's path starts: known if this
        // one's end is, or if all of its candidates lead to the same one.
        std::optional<int> only;
        bool same = true;
        for (int c = 0; c < kCandidates; ++c) {
          const int h = e.start_holder[c];
          if (h < 0) continue;
          if (!only) only = h;
          same = same && *only == h;
        }
        if (e.end_holder) {
          pending_[i - 1].end_holder = holder_at_start(ctx, e, *e.end_holder);
        } else if (same && only) {
          pending_[i - 1].end_holder = *only;
        }
      }
    }
    // Far too many epochs waiting (candidates that never meet, and no
    // synchronizing cut): take the oldest one's end from rank 0 (approximate).
    if (pending_.size() > kMaxPending && !pending_.front().end_holder) {
      pending_.front().end_holder = 0;
      if (ctx.world_rank() == 0) ctx.note_guessed_path();
    }
    for (auto& e : pending_) {
      if (!e.end_holder || e.pieces.empty()) continue;
      const int h = *e.end_holder;
      for (const Piece& p : e.pieces) {
        if (h < kCandidates && ((p.mask >> h) & 1)) ctx.add_at(Metric::critical_path, p.location, p.callpath, p.seconds);
      }
      e.pieces.clear();
    }
    // An epoch is resolved when its successor is (or when the successor's
    // candidates all met), so the resolved ones are the oldest: drop them,
    // keep the rest for the epochs to come.
    while (!pending_.empty() && pending_.front().end_holder) pending_.pop_front();
  }

 private:
  // The candidate holding candidate `c` at the start of `e`.  A candidate
  // that none holds there went with a wait whose cause has no point in the
  // window (a window without the collective that ended it on some rank,
  // after a cut that reached it late; docs/design.md): the path's end
  // before it is guessed, the same way on every rank (the start holders
  // are the same everywhere), and counted once.
  static int holder_at_start(SyncContext& ctx, const Epoch& e, int c) {
    if (c >= 0 && c < kCandidates && e.start_holder[static_cast<std::size_t>(c)] >= 0) {
      return e.start_holder[static_cast<std::size_t>(c)];
    }
    if (ctx.world_rank() == 0) ctx.note_guessed_path();
    for (int h : e.start_holder) {
      if (h >= 0) return h;
    }
    return 0;
  }
  std::deque<Epoch> pending_;  // epochs whose end holder is not known yet, and the one after
};

}  // namespace onlinews::analysis::path
