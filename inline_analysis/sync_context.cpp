// The synchronization context handlers use during the backward walk:
// synchronization points, intervals and time profiles of the window.
#include <algorithm>

#include "sync_replay.hpp"

namespace onlinews::analysis {
std::vector<SyncPoint>& SyncContext::points() { return r_.points_; }
int SyncContext::location() const {
  if (r_.in_->origin == nullptr || current_ >= r_.points_.size()) return std::max(r_.in_->location, 0);
  return location_of(r_.points_[current_]);
}
int SyncContext::location_of(const SyncPoint& sp) const {
  const auto* o = r_.in_->origin;
  if (o == nullptr) return std::max(r_.in_->location, 0);
  return sp.event < o->size() ? (*o)[sp.event] : 0;
}
Transport& SyncContext::transport() { return *r_.transport_; }

std::uint64_t SyncContext::hash(std::uint32_t cp) { return r_.callpath_hash(rc_.defs(), rc_.callpaths(), cp); }

std::int64_t SyncContext::window_begin() const { return r_.in_->begin; }
std::int64_t SyncContext::window_end() const {
  const auto& e = *r_.in_->events;
  const std::int64_t last = e.empty() ? 0 : static_cast<std::int64_t>(e.back().time);
  return std::max(last, r_.in_->bounds.end);
}
bool SyncContext::starts_synchronized() const { return r_.in_->bounds.starts_synchronized; }
bool SyncContext::ends_synchronized() const { return r_.in_->bounds.ends_synchronized; }
bool SyncContext::last_window() const { return r_.in_->bounds.last; }
std::uint32_t SyncContext::epoch() const { return r_.in_->epoch; }
const std::vector<CrossingSend>& SyncContext::crossing_sends() const { return r_.in_->crossing_sends; }

CutCollective SyncContext::ending_collective() {
  CutCollective c;
  if (!ends_synchronized()) return c;
  const auto& pts = r_.points_;
  for (std::size_t k = pts.size(); k-- > 1;) {
    const SyncPoint& sp = pts[k];
    if (sp.kind != SyncKind::Collective || !sp.all_ranks) continue;
    c.point = k;
    c.completion_from = std::max(sp.enter, std::min(window_end(), sp.enter + static_cast<std::int64_t>(sp.wait * 1e9)));
    c.callpath = sp.callpath;
    c.location = location_of(sp);
    break;
  }
  return c;
}

const CutCollective& SyncContext::starting_collective() const {
  static const CutCollective kNone;
  return starts_synchronized() ? r_.cut_before_ : kNone;
}
void SyncContext::note_truncated() { ++r_.truncated_; }
void SyncContext::note_unattributed(double seconds) { r_.unattributed_ += seconds; }
void SyncContext::note_guessed_path() { ++r_.guessed_paths_; }
void SyncContext::note_approximate_path(double seconds) { r_.approximate_path_ += seconds; }

Sym SyncContext::incoming(std::size_t slot) {
  return r_.syms_.reduce_node(current_, slot);
}
Sym SyncContext::reduce(const Sym& s, std::size_t slot) { return r_.syms_.reduce(s, slot); }
std::array<double, kMaxLanes> SyncContext::value(const Sym& s, std::size_t slot) {
  return r_.syms_.reduce(s, slot).lanes();  // (a value still open counts as 0: cannot happen after settling)
}

bool SyncContext::concurrent() const { return r_.in_->concurrent; }

bool SyncContext::same_thread(std::size_t i, std::size_t k) const {
  const auto& p = r_.points_;
  if (!r_.in_->concurrent || i == 0 || i >= p.size() || k >= p.size()) return true;
  return location_of(p[i]) == location_of(p[k]);
}

bool SyncContext::counts_wait(std::size_t i, std::size_t k) const {
  const SyncPoint& p = r_.points_[i];
  return p.wait > 0 && !p.bound_only && same_thread(i, k);
}

std::size_t SyncContext::previous_with(std::size_t k, int peer) {
  const auto& p = r_.points_;
  for (std::size_t i = k; i-- > 1;) {
    const SyncPoint& s = p[i];
    if (!same_thread(i, k)) continue;
    // A scan synchronizes only with lower ranks: not a boundary; a
    // collective's pairs lie before its Collective point, the boundary.
    if (is_scan(s.kind) || is_coll_pair(s.kind)) continue;
    if (s.kind == SyncKind::Collective) {
      if (s.all_ranks) return i;
      const CommDef* c = rc_.defs().comm(s.comm);
      if (c != nullptr && c->rank_of_world(peer) >= 0) return i;
    } else if (s.peer == peer) {
      return i;
    }
  }
  return 0;
}

std::size_t SyncContext::previous_with_all(std::size_t k) {
  const auto& p = r_.points_;
  const SyncPoint& sk = p[k];
  for (std::size_t i = k; i-- > 1;) {
    const SyncPoint& s = p[i];
    if (!same_thread(i, k)) continue;
    if (s.kind == SyncKind::Collective && (s.all_ranks || s.comm == sk.comm)) return i;
  }
  return 0;
}

// Index of the first event after time t (ns), searched outwards from `near`.
static std::size_t first_after(const std::vector<Event>& ev, std::int64_t t, std::size_t near) {
  auto after = [t](const Event& e) { return static_cast<std::int64_t>(e.time) > t; };
  std::size_t lo = 0, hi = ev.size();  // the answer lies in [lo, hi]
  if (near < ev.size()) {
    if (after(ev[near])) {  // gallop down
      hi = near;
      for (std::size_t step = 1; hi > 0; step *= 2) {
        const std::size_t probe = hi > step ? hi - step : 0;
        if (!after(ev[probe])) {
          lo = probe + 1;
          break;
        }
        hi = probe;
      }
    } else {  // gallop up
      lo = near + 1;
      for (std::size_t step = 1; lo < ev.size(); step *= 2) {
        const std::size_t probe = std::min(ev.size() - 1, lo + step - 1);
        if (after(ev[probe])) {
          hi = probe;
          break;
        }
        lo = probe + 1;
      }
    }
  }
  return static_cast<std::size_t>(
      std::upper_bound(ev.begin() + static_cast<std::ptrdiff_t>(lo), ev.begin() + static_cast<std::ptrdiff_t>(hi), t,
                       [](std::int64_t v, const Event& e) { return v < static_cast<std::int64_t>(e.time); }) -
      ev.begin());
}

int SyncContext::last_location() const {
  const auto* o = r_.in_->origin;
  return o == nullptr || o->empty() ? std::max(r_.in_->location, 0) : o->back();
}

TimeMap SyncContext::time_map(std::int64_t t0, std::int64_t t1, std::size_t near, std::size_t at) {
  const std::size_t k = at < r_.points_.size() ? at : current_;
  const int l = k < r_.points_.size() ? location_of(r_.points_[k]) : location();
  return time_map_on(l, t0, t1, near);
}

TimeMap SyncContext::time_map_on(int location, std::int64_t t0, std::int64_t t1, std::size_t near) {
  const auto* o = r_.in_->origin;
  if (o == nullptr && location == r_.in_->location) return time_map_in(*r_.in_->events, *r_.in_->annot, t0, t1, near);
  // A merged view, or another thread than the view's (the critical path
  // through an OpenMP barrier): the location's own window (`near` is a
  // view index).
  const auto l = static_cast<std::size_t>(location);
  const auto& lw = r_.in_->locations;
  if (location < 0 || l >= lw.size() || lw[l].first == nullptr) return {};
  near = o != nullptr && near < o->size() && (*o)[near] == location ? (*r_.in_->origin_index)[near]
                                                                    : static_cast<std::size_t>(-1);
  return time_map_in(*lw[l].first, *lw[l].second, t0, t1, near);
}

constexpr std::size_t kPrefetchBehind = 24;

TimeMap SyncContext::time_map_in(const std::vector<Event>& ev, const std::vector<EventAnnotation>& an,
                                 std::int64_t t0, std::int64_t t1, std::size_t near) {
  TimeMap out;
  const auto& tree = rc_.callpaths();
  if (t1 <= t0) return out;
  if (ev.empty()) {  // a requested window in which this rank recorded nothing
    if (r_.in_->open_callpath != kNoCallpath) {
      out.callpaths.push_back(r_.in_->open_callpath);
      out.seconds.push_back(secs(t1 - t0));
    }
    return out;
  }
  auto& acc = r_.scratch_;
  auto& touched = r_.touched_;
  if (acc.size() < tree.size()) acc.resize(tree.size(), 0);
  // (Summed in ns; runs of events owned by the same call path are summed
  // first: most time maps span many events.)
  // (Inlined: called once per run of a call path, ~10 times per interval;
  // out of line it cost a tenth of this function.)
  auto charge = [&](std::uint32_t cp, std::int64_t ns) __attribute__((always_inline)) {
    if (ns <= 0 || cp == kNoCallpath || cp >= acc.size()) return;
    if (acc[cp] == 0) touched.push_back(cp);
    acc[cp] += ns;
  };
  // A window that ends (or starts) at a requested cut reaches past its last
  // (before its first) event: that time belongs to the region open there.
  const auto first = static_cast<std::int64_t>(ev.front().time), last = static_cast<std::int64_t>(ev.back().time);
  if (t0 < first) {
    std::uint32_t cp = an.front().callpath;  // open before the first event
    if (ev.front().kind == EventKind::Enter && cp != kNoCallpath) cp = tree.node(cp).parent;
    charge(cp, std::min(first, t1) - t0);
  }
  if (t1 > last) {
    std::uint32_t cp = an.back().callpath;  // open after the last event
    if (ev.back().kind == EventKind::Leave && cp != kNoCallpath) cp = tree.node(cp).parent;
    charge(cp, t1 - std::max(last, t0));
  }
  // The call path that owns the time after event i.
  auto owner = [&](std::size_t i) {
    const std::uint32_t cp = an[i].callpath;
    return ev[i].kind == EventKind::Leave && cp != kNoCallpath ? tree.node(cp).parent : cp;
  };
  // The event whose following interval contains t0.
  std::size_t i = first_after(ev, t0, near);
  i = i > 0 ? i - 1 : 0;
  const std::size_t start = i, n = ev.size();
  // The backward walk asks next for the interval before this one: its events
  // and annotations are fetched while this one is summed (a cache miss per
  // event otherwise, half of this function's time on a large window).
  for (std::size_t k = 1; k <= kPrefetchBehind && k <= start; k += 2) {
    __builtin_prefetch(&ev[start - k]);
    __builtin_prefetch(&an[start - k]);
  }
  // A long span takes whole chunks from the index (time_map_index.hpp).
  const TimeMapIndex::Window* index = nullptr;
  // (At least min_span events in [start, first_after(t1)): the times are
  // sorted, so one look at the min_span-th event tells.  start < n here;
  // a test turns the index off with min_span = SIZE_MAX.)
  if (const std::size_t m = TimeMapIndex::min_span;
      m != 0 && n - start >= m && static_cast<std::int64_t>(ev[start + m - 1].time) <= t1) {
    index = &r_.index_.of(ev, owner);
  }
  std::uint32_t run_cp = kNoCallpath;
  std::int64_t run_ns = 0;
  for (; i + 1 < n && static_cast<std::int64_t>(ev[i].time) < t1; ++i) {
    if (index != nullptr && i > start && i % TimeMapIndex::kChunk == 0) {
      // Every interval of the chunk lies in [t0, t1] (each event after
      // `start` is past t0): its sums are the scan's.
      const std::size_t c = i / TimeMapIndex::kChunk, e = std::min(n - 1, i + TimeMapIndex::kChunk);
      if (static_cast<std::int64_t>(ev[e].time) <= t1) {
        for (const auto* x = index->begin(c); x != index->end(c); ++x) charge(x->callpath, x->ns);
        TimeMapIndex::chunks_taken.fetch_add(1, std::memory_order_relaxed);
        i = e - 1;
        continue;
      }
    }
    const std::int64_t a = std::max<std::int64_t>(static_cast<std::int64_t>(ev[i].time), t0);
    const std::int64_t b = std::min<std::int64_t>(static_cast<std::int64_t>(ev[i + 1].time), t1);
    const std::uint32_t cp = owner(i);
    if (b <= a) continue;
    if (cp != run_cp) {
      charge(run_cp, run_ns);
      run_cp = cp;
      run_ns = 0;
    }
    run_ns += b - a;
  }
  charge(run_cp, run_ns);
  out.callpaths.reserve(touched.size());
  out.seconds.reserve(touched.size());
  for (std::uint32_t cp : touched) {
    out.callpaths.push_back(cp);
    out.seconds.push_back(secs(acc[cp]));
    acc[cp] = 0;
  }
  touched.clear();
  return out;
}


// The part before the window of an interval starting at point `j` (with
// `peer`, or with all members of a collective on `comm`).
static const CarriedMap* carried_part(const IntervalCarry& carry, const Definitions& defs, const SyncPoint& start,
                                      bool at_window_start, int peer, int comm) {
  if (start.kind == SyncKind::LsSendEarlier) {
    const CarriedSend* s = carry.send(start.peer, start.seq, start.epoch);
    return s != nullptr ? &s->tail : nullptr;
  }
  if (!at_window_start) return nullptr;
  if (peer >= 0) return carry.peer(peer);
  const CommDef* c = defs.comm(static_cast<std::uint16_t>(comm));
  return c != nullptr ? carry.comm(c->gid) : nullptr;
}

SyncContext::Interval SyncContext::interval_with(std::size_t k, int peer) {
  return interval(previous_with(k, peer), k, peer, -1);
}

SyncContext::Interval SyncContext::interval_with_all(std::size_t k) {
  return interval(previous_with_all(k), k, -1, r_.points_[k].comm);
}

// Processing time per call path from the end of the wait at point `j` to
// the enter of point `k`'s call, with the part before the window joined,
// minus the waits of the points in between (which may have begun before the
// window: a receive across the cut, whose waiting the part before counted as
// time in the receive).
SyncContext::Interval SyncContext::interval(std::size_t j, std::size_t k, int peer, int comm) {
  const auto& p = r_.points_;
  Interval iv;
  iv.start = j;
  // (An earlier send's interval goes on from the window's start.)
  const bool from_start = j == 0 || p[j].kind == SyncKind::LsSendEarlier;
  const std::int64_t t0 = from_start ? window_begin() : p[j].enter + static_cast<std::int64_t>(p[j].wait * 1e9);
  TimeMap& m = iv.map;
  m = time_map(t0, p[k].enter, from_start ? 0 : p[j].event, k);
  auto add = [&m](std::uint32_t cp, double v) {
    for (std::size_t e = 0; e < m.callpaths.size(); ++e) {
      if (m.callpaths[e] != cp) continue;
      m.seconds[e] += v;
      return;
    }
    m.callpaths.push_back(cp);
    m.seconds.push_back(v);
  };
  // (After a synchronizing cut the part before is the cut's collective's
  // completion: IntervalCarry::reset.)
  if (const CarriedMap* c = carried_part(r_.carry_, rc_.defs(), p[j], j == 0, peer, comm)) {
    iv.waits += c->waits;
    iv.carried = c;
    for (const auto& [cp, v] : c->seconds) add(cp, v);
    // The part before reaches to the cut; a call entered before it (a
    // receive across the cut) ends the interval at its enter.
    if (p[k].enter < window_begin()) add(p[k].callpath, -secs(window_begin() - p[k].enter));
  } else {
    iv.truncated = j == 0 && !starts_synchronized();
  }
  for (std::size_t i = j + 1; i < k; ++i) {
    if (!counts_wait(i, k)) continue;
    iv.waits += p[i].wait;
    add(p[i].callpath, -p[i].wait);
  }
  // Keep the positive entries only (in place).
  std::size_t n = 0;
  for (std::size_t e = 0; e < m.callpaths.size(); ++e) {
    if (m.seconds[e] > 1e-12) {
      m.callpaths[n] = m.callpaths[e];
      m.seconds[n++] = m.seconds[e];
    }
  }
  m.callpaths.resize(n);
  m.seconds.resize(n);
  return iv;
}

const CarriedSend* SyncContext::earlier_send(const SyncPoint& sp) const {
  return r_.carry_.send(sp.peer, sp.seq, sp.epoch);
}

const std::vector<CarriedWait>& SyncContext::carried_waits() const { return r_.carry_.recent(); }

TimeMap SyncContext::to_map(const CarriedMap& m) {
  TimeMap t;
  for (const auto& [cp, v] : m.seconds) {
    t.callpaths.push_back(cp);
    t.seconds.push_back(v);
  }
  return t;
}

}  // namespace onlinews::analysis
