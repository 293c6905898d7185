// Interval parts carried across requested cuts (interval_carry.hpp).
#include "interval_carry.hpp"

#include <algorithm>
#include <cmath>

#include "sync_replay.hpp"

namespace onlinews::analysis {
namespace {

// Dense accumulation over local call paths.
class Accumulator {
 public:
  void add(std::uint32_t cp, double v) {
    if (cp >= seconds_.size()) seconds_.resize(cp + 1, 0.0), used_.resize(cp + 1, 0);
    if (used_[cp] == 0) {
      used_[cp] = 1;
      touched_.push_back(cp);
    }
    seconds_[cp] += v;
  }
  CarriedMap snapshot(double waits, double explained, std::size_t named) {
    CarriedMap m;
    m.waits = waits;
    m.explained = explained;
    m.last = static_cast<std::uint32_t>(named);
    std::sort(touched_.begin(), touched_.end());
    for (std::uint32_t cp : touched_) {
      if (std::abs(seconds_[cp]) > 1e-12) m.seconds.emplace_back(cp, seconds_[cp]);
    }
    return m;
  }

 private:
  std::vector<double> seconds_;
  std::vector<char> used_;
  std::vector<std::uint32_t> touched_;
};

// a + sign * b over sorted call paths.  Entries may be negative: a wait
// found in a later window began before it, and the part before counted its
// beginning as time in the call (the waits are taken out where a part is used).
// `b` is a part of the window just walked, and so are its named waits: with
// sign > 0 `a` is older (its named waits are another window's, now a sum
// only), with sign < 0 both are suffixes of that window and `b` the shorter.
CarriedMap combine(const CarriedMap& a, const CarriedMap& b, double sign) {
  CarriedMap out;
  out.waits = std::max(a.waits + sign * b.waits, 0.0);
  out.explained = std::max(a.explained + sign * b.explained, 0.0);
  out.first = sign > 0 ? b.first : b.last;
  out.last = sign > 0 ? b.last : std::max(a.last, b.last);
  std::size_t i = 0, j = 0;
  auto keep = [&](std::uint32_t cp, double v) {
    if (std::abs(v) > 1e-12) out.seconds.emplace_back(cp, v);
  };
  while (i < a.seconds.size() || j < b.seconds.size()) {
    if (j == b.seconds.size() || (i < a.seconds.size() && a.seconds[i].first < b.seconds[j].first)) {
      keep(a.seconds[i].first, a.seconds[i].second);
      ++i;
    } else if (i == a.seconds.size() || b.seconds[j].first < a.seconds[i].first) {
      keep(b.seconds[j].first, sign * b.seconds[j].second);
      ++j;
    } else {
      keep(a.seconds[i].first, a.seconds[i].second + sign * b.seconds[j].second);
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace

void IntervalCarry::reset(CarriedMap completion) {
  valid_ = true;
  entries_.assign(1, std::move(completion));
  peer_entry_.clear();
  comm_entry_.clear();
  sends_.clear();
  recent_.clear();
}

void IntervalCarry::invalidate() {
  reset();
  valid_ = false;
}

const CarriedMap* IntervalCarry::peer(int world_rank) const {
  if (!valid_ || entries_.empty()) return nullptr;
  const auto r = static_cast<std::size_t>(world_rank);
  return &entries_[world_rank >= 0 && r < peer_entry_.size() ? peer_entry_[r] : 0];
}

const CarriedMap* IntervalCarry::comm(std::uint64_t gid) const {
  if (!valid_ || entries_.empty()) return nullptr;
  auto it = comm_entry_.find(gid);
  return &entries_[it == comm_entry_.end() ? 0 : it->second];
}

const CarriedSend* IntervalCarry::send(int dest, std::uint32_t seq, std::uint32_t epoch) const {
  if (!valid_ || epoch != sends_epoch_) return nullptr;
  auto it = sends_.find({dest, seq});
  return it == sends_.end() ? nullptr : &it->second;
}

void IntervalCarry::update(SyncContext& ctx, const std::vector<CrossingSend>& crossing, std::uint32_t epoch) {
  const auto& pts = ctx.points();
  const int nranks = ctx.world_size();
  if (entries_.empty()) entries_.assign(1, CarriedMap{});
  if (!valid_) reset();  // intervals reaching back past the start of this window stay truncated there

  // The last synchronization point shared with each partner and on each
  // communicator (previous_with's rule, from the window's end; 0: none).
  std::vector<std::size_t> peer_b(static_cast<std::size_t>(nranks), 0);
  std::map<std::uint64_t, std::size_t> comm_b;  // by gid
  std::size_t all_b = 0;
  int uncovered = nranks;
  for (std::size_t k = pts.size(); k-- > 1 && all_b == 0;) {
    const SyncPoint& s = pts[k];
    if (is_scan(s.kind) || is_coll_pair(s.kind)) continue;  // (bound no interval)
    if (s.kind == SyncKind::Collective) {
      if (s.all_ranks) {
        all_b = k;
        break;
      }
      const CommDef* c = ctx.defs().comm(s.comm);
      if (c != nullptr) comm_b.try_emplace(c->gid, k);
      for (int r = 0; c != nullptr && uncovered > 0 && r < c->size; ++r) {
        const auto w = c->world_ranks[static_cast<std::size_t>(r)];
        if (w >= 0 && w < nranks && peer_b[static_cast<std::size_t>(w)] == 0) {
          peer_b[static_cast<std::size_t>(w)] = k;
          --uncovered;
        }
      }
    } else if (s.peer >= 0 && s.peer < nranks && peer_b[static_cast<std::size_t>(s.peer)] == 0) {
      peer_b[static_cast<std::size_t>(s.peer)] = k;
      --uncovered;
    }
  }
  if (all_b > 0) {
    for (auto& b : peer_b) b = b == 0 ? all_b : b;
  }
  // Crossing sends: where their interval with the receiver starts.
  // (After the earlier sends at the front, which have no event here; per
  // receiver from the latest send back, so that each scan of the points
  // for a receiver continues where the last one stopped.)
  std::size_t first_own = 1;
  while (first_own < pts.size() && pts[first_own].kind == SyncKind::LsSendEarlier) ++first_own;
  std::vector<std::size_t> send_b(crossing.size(), 0), send_pos(crossing.size(), 1);
  std::vector<std::size_t> order(crossing.size());
  for (std::size_t i = 0; i < crossing.size(); ++i) {
    auto it = std::lower_bound(pts.begin() + static_cast<std::ptrdiff_t>(first_own), pts.end(), crossing[i].event,
                               [](const SyncPoint& p, std::size_t e) { return p.event < e; });
    send_pos[i] = static_cast<std::size_t>(it - pts.begin());
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return crossing[a].dest != crossing[b].dest ? crossing[a].dest < crossing[b].dest : send_pos[a] > send_pos[b];
  });
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::size_t i = order[n];
    const bool same = n > 0 && crossing[order[n - 1]].dest == crossing[i].dest;
    // The previous send's start lies before this send: it is this one's too.
    if (same && send_b[order[n - 1]] < send_pos[i]) {
      send_b[i] = send_b[order[n - 1]];
    } else {
      send_b[i] = ctx.previous_with(send_pos[i], crossing[i].dest);
    }
  }

  // Suffixes from each such start to the cut, accumulated backwards.
  struct Cut {
    std::int64_t t;
    std::size_t pos;  // points at and after this index lie after the cut's time
    std::size_t slot;
  };
  std::vector<Cut> cuts;
  std::map<std::size_t, std::size_t> point_slot;  // boundary point -> slot
  std::size_t slots = 1;                          // slot 0: the whole window
  cuts.push_back({ctx.window_begin(), 1, 0});
  auto add_point = [&](std::size_t b) {
    if (b == 0 || pts[b].kind == SyncKind::LsSendEarlier || point_slot.count(b) != 0) return;
    point_slot[b] = slots;
    cuts.push_back({pts[b].enter + static_cast<std::int64_t>(pts[b].wait * 1e9), b + 1, slots++});
  };
  for (std::size_t b : peer_b) add_point(b);
  for (const auto& [c, b] : comm_b) add_point(b);
  add_point(all_b);
  for (std::size_t b : send_b) add_point(b);
  std::vector<std::size_t> send_slot(crossing.size());
  for (std::size_t i = 0; i < crossing.size(); ++i) {
    send_slot[i] = slots;
    cuts.push_back({crossing[i].enter, send_pos[i], slots++});
  }
  // A point whose wait ended before the window (a receive across the cut
  // before) starts within the window's points but before its time: order
  // by time from the window's start, then by position.
  const std::int64_t begin = ctx.window_begin();
  std::sort(cuts.begin(), cuts.end(), [begin](const Cut& a, const Cut& b) {
    const std::int64_t ta = std::max(a.t, begin), tb = std::max(b.t, begin);
    return ta != tb ? ta > tb : a.pos > b.pos;
  });
  std::vector<CarriedMap> snap(slots);
  std::vector<CarriedWait> recent;  // latest first, as the snapshots take them
  Accumulator acc;
  double waits = 0, explained = 0;
  std::int64_t t_end = ctx.window_end();
  std::size_t next = pts.size();
  auto add = [&acc](const TimeMap& tm, double sign) {
    for (std::size_t i = 0; i < tm.callpaths.size(); ++i) acc.add(tm.callpaths[i], sign * tm.seconds[i]);
  };
  for (const Cut& c : cuts) {
    const std::int64_t t = std::min(std::max(c.t, begin), t_end);
    add(ctx.time_map_on(ctx.last_location(), t, t_end), 1.0);
    t_end = t;
    for (; next > std::max<std::size_t>(c.pos, 1); --next) {
      const SyncPoint& p = pts[next - 1];
      if (p.wait <= 0 || p.bound_only) continue;  // (counted at its CollWait point)
      acc.add(p.callpath, -p.wait);
      waits += p.wait;
      recent.push_back(wait_name(p, ctx.location_of(p), p.wait));
      if (explained_wait(recent.back())) explained += p.wait;
    }
    if (c.t < begin) {  // (time_map gives the time before the window to the call open there)
      const TimeMap before = ctx.time_map_on(ctx.last_location(), c.t, begin);
      add(before, 1.0);
      snap[c.slot] = acc.snapshot(waits, explained, recent.size());
      add(before, -1.0);
    } else {
      snap[c.slot] = acc.snapshot(waits, explained, recent.size());
    }
  }

  // The new parts: a partner synchronized with in this window starts at
  // that point; any other keeps its old part, extended by the whole window.
  std::vector<CarriedMap> entries;
  std::map<std::size_t, std::uint32_t> from_point;
  std::map<std::uint32_t, std::uint32_t> from_old;
  auto extended = [&](std::uint32_t old) {
    auto [it, fresh] = from_old.try_emplace(old, static_cast<std::uint32_t>(entries.size()));
    if (fresh) entries.push_back(combine(entries_[old < entries_.size() ? old : 0], snap[0], 1.0));
    return it->second;
  };
  auto at_point = [&](std::size_t b) {
    auto [it, fresh] = from_point.try_emplace(b, static_cast<std::uint32_t>(entries.size()));
    if (!fresh) return it->second;
    if (pts[b].kind == SyncKind::LsSendEarlier) {
      const CarriedSend* s = send(pts[b].peer, pts[b].seq, pts[b].epoch);
      entries.push_back(s != nullptr ? combine(s->tail, snap[0], 1.0) : snap[0]);
    } else {
      entries.push_back(snap[point_slot[b]]);
    }
    return it->second;
  };
  auto old_peer = [&](std::size_t p) { return p < peer_entry_.size() ? peer_entry_[p] : 0u; };
  // Entry 0, made first: the part since the last point shared with all ranks.
  if (all_b > 0) {
    at_point(all_b);
  } else {
    extended(0);
  }
  std::vector<std::uint32_t> peers(static_cast<std::size_t>(nranks));
  for (std::size_t p = 0; p < peers.size(); ++p) peers[p] = peer_b[p] > 0 ? at_point(peer_b[p]) : extended(old_peer(p));
  std::map<std::uint64_t, std::uint32_t> comms;
  for (const auto& [c, old] : comm_entry_) comms[c] = all_b > 0 ? 0 : extended(old);
  for (const auto& [c, b] : comm_b) comms[c] = at_point(b);
  std::map<std::pair<int, std::uint32_t>, CarriedSend> sends;
  for (std::size_t i = 0; i < crossing.size(); ++i) {
    const CrossingSend& x = crossing[i];
    const std::size_t b = send_b[i];
    const std::uint32_t start =
        b > 0 ? at_point(b) : extended(x.dest >= 0 ? old_peer(static_cast<std::size_t>(x.dest)) : 0u);
    CarriedSend s;
    s.tail = snap[send_slot[i]];
    s.interval = combine(entries[start], s.tail, -1.0);
    s.enter = x.enter;
    s.callpath = x.callpath;
    sends[{x.dest, x.seq}] = std::move(s);
  }
  entries_ = std::move(entries);
  peer_entry_ = std::move(peers);
  comm_entry_ = std::move(comms);
  sends_ = std::move(sends);
  sends_epoch_ = epoch;
  recent_ = std::move(recent);
  valid_ = true;
}

}  // namespace onlinews::analysis
