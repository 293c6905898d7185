// Clock-condition correction (DESIGN.md §7).  After the offsets of
// runtime/clock_sync, a receive (or probe) may still appear to happen before
// its message was sent: offsets are measured with some error and drift is
// not quite linear.  Such events would turn waits into nonsense (a Late
// Sender whose receive ends before the send began), so every epoch, once
// messages are matched, the analyzed location's timestamps are corrected:
//
//  * forward amortization (a controlled logical clock): a violating event is
//    moved to its send's start, and the events after it keep moving with
//    it, the shift shrinking by (1 - gamma) of every later interval until
//    it has gone; changed send times travel to their receivers, which may
//    then move in turn, until no rank has a violation left;
//  * backward amortization: the events shortly *before* each such jump are
//    moved forward too, on a linear ramp, so the jump does not stretch the
//    call that contains it.  A ramp is flattened where it would move a send
//    past the earliest probe or receive of its message (each receiver tells
//    its senders), so it never creates a new violation.
//
// Only events of the analyzed (MPI) location are moved.  A shift still left
// at the end of a window decays on into the next one (a region open across
// the cut thus keeps consistent enter and leave times).  Nothing happens
// (beyond one allreduce) when no rank has a violation or a shift to carry.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine.hpp"

namespace onlinews::analysis {
namespace {

constexpr double kGamma = 0.99;       // forward amortization: intervals shrink by 1 %
constexpr double kRampFactor = 100;   // backward ramp: up to 1 / (1 - gamma) times the jump
constexpr int kMaxRounds = 16;        // exchanges of corrected send times per epoch

}  // namespace

// Recomputes the annotation's enter and leave times (and the open frames'
// enter times) after event times changed; `owner[i]` becomes the index of
// the Enter event of the region that encloses event i in this window, or
// kNoEvent.
void Analyzer::Impl::refresh_times(LocationWindow& w, std::vector<std::size_t>& owner) {
  LocationState& st = loc(w.location);
  const std::size_t n = w.events.size();
  owner.assign(n, kNoEvent);
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = w.events[i];
    EventAnnotation& a = st.annot[i];
    if (e.kind == EventKind::Enter) {
      open.push_back(i);
    } else if (e.kind == EventKind::Leave && !open.empty()) {
      owner[i] = open.back();
      open.pop_back();
      a.enter = static_cast<std::int64_t>(w.events[owner[i]].time);
      continue;
    }
    if (!open.empty()) {
      owner[i] = open.back();
      a.enter = static_cast<std::int64_t>(w.events[owner[i]].time);
    }
  }
  // Regions still open at the end of the window: the innermost ones were
  // entered here (in stack order), and the next window reads their enter.
  std::size_t k = open.size();
  for (auto f = st.stack.rbegin(); f != st.stack.rend() && k > 0; ++f) {
    if (f->frame < st.window_first_frame) break;
    f->enter = static_cast<std::int64_t>(w.events[open[--k]].time);
  }
  fill_leaves(w, st);
}

Task<> Analyzer::Impl::correct_clocks(LocationWindow& w, Transport& t) {
  LocationState& st = loc(w.location);
  auto& ev = w.events;
  const std::size_t n = ev.size();
  // Constraints: each matched receive and probe must not precede its send.
  struct Constraint {
    std::size_t event;
    std::int32_t link;  // into `matched`
    bool violated;      // at some point during the correction
  };
  // Whether any constraint is violated: usually none, so this is checked
  // before the constraints are collected and sorted.
  auto violated = [&](std::size_t event) {
    const std::int32_t l = st.links[event];
    return l >= 0 && static_cast<std::int64_t>(ev[event].time) < matched[static_cast<std::size_t>(l)].enter;
  };
  bool broken = false;
  for (const CompletedRecv& cr : completed) broken = broken || violated(cr.event);
  for (const auto& [recv, probe] : probed) broken = broken || violated(probe);
  for (const std::size_t probe : unreceived_linked) broken = broken || violated(probe);
  double any = broken || clock_carry ? 1.0 : 0.0;
  co_await t.allreduce_max(&any, 1);
  if (any == 0) co_return;  // the same on every rank: from here on, every step is collective

  std::vector<Constraint> cons;
  for (const CompletedRecv& cr : completed) {
    if (st.links[cr.event] >= 0) cons.push_back({cr.event, st.links[cr.event], false});
  }
  for (const auto& [recv, probe] : probed) {
    if (st.links[probe] >= 0) cons.push_back({probe, st.links[probe], false});
  }
  for (const std::size_t probe : unreceived_linked) cons.push_back({probe, st.links[probe], false});
  std::sort(cons.begin(), cons.end(), [](const Constraint& a, const Constraint& b) { return a.event < b.event; });
  auto violations = [&] {
    std::uint64_t v = 0;
    for (auto& c : cons) {
      if (static_cast<std::int64_t>(ev[c.event].time) < matched[static_cast<std::size_t>(c.link)].enter) {
        c.violated = true;
        ++v;
      }
    }
    return v;
  };
  violations();  // (marks the constraints violated from the start)

  std::vector<std::int64_t> orig(n), fwd(n);
  for (std::size_t i = 0; i < n; ++i) orig[i] = static_cast<std::int64_t>(ev[i].time);
  std::vector<std::size_t> owner;
  // Receivers: matched record of this epoch by (source, seq).
  std::unordered_map<std::uint64_t, std::size_t> by_send;
  for (std::size_t l = 0; l < matched.size(); ++l) {
    if (matched[l].epoch == static_cast<std::uint32_t>(epoch)) by_send[send_key(matched[l].src, matched[l].seq)] = l;
  }
  // Senders: publishes corrected enter times of this epoch's sends (read
  // from the events; `published` is what the receiver holds); the
  // receivers update their matched (or still pending) records, the only
  // copies of a remote send's time.
  std::unordered_map<std::size_t, std::int64_t> published;  // send event -> enter the receiver has
  send_events.for_each([&](int, std::uint32_t, std::size_t i) { published[i] = st.annot[i].enter; });
  auto publish_sends = [&]() -> Task<> {
    std::map<int, std::vector<SendUpdate>> out;
    send_events.for_each([&](int dest, std::uint32_t seq, std::size_t i) {
      const std::int64_t enter = st.annot[i].enter;
      std::int64_t& was = published[i];
      if (enter == was) return;
      was = enter;
      const CommDef* c = defs.comm(ev[i].comm);
      out[dest].push_back({c != nullptr ? c->gid : 0, enter, ev[i].tag, seq});
    });
    for (const auto& [src, list] : co_await exchange_records(t, out)) {
      for (const SendUpdate& u : list) {
        auto m = by_send.find(send_key(src, u.seq));
        if (m != by_send.end()) {
          matched[m->second].enter = u.enter;
          // (A probe's copy of a record still queued for its receive:
          // probe_messages.cpp.  The queued one is updated too.)
          if (unreceived_linked.empty()) continue;
        }
        pending.for_each_of({src, u.comm_gid, u.tag}, [&](SendRecord& r) {
          if (r.seq == u.seq && r.epoch == static_cast<std::uint32_t>(epoch)) r.enter = u.enter;
        });
      }
    }
  };

  // Forward amortization, repeated while corrected sends cause new violations.
  std::uint64_t left = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t v = orig[i];
      const std::int64_t prev_orig = i > 0 ? orig[i - 1] : carry_orig;
      const std::int64_t prev_fwd = i > 0 ? fwd[i - 1] : carry_fwd;
      if (i > 0 || clock_carry) {
        const std::int64_t d = std::max<std::int64_t>(orig[i] - prev_orig, 0);
        v = std::max(v, prev_fwd + d - static_cast<std::int64_t>((1.0 - kGamma) * static_cast<double>(d)));
      }
      for (; c < cons.size() && cons[c].event == i; ++c) {
        v = std::max(v, matched[static_cast<std::size_t>(cons[c].link)].enter);
      }
      fwd[i] = v;
      ev[i].time = static_cast<std::uint64_t>(v);
    }
    refresh_times(w, owner);
    co_await publish_sends();
    left = violations();
    double again = left > 0 ? 1.0 : 0.0;
    co_await t.allreduce_max(&again, 1);
    if (again == 0) break;
  }

  // Backward amortization.  Receivers first tell each sender of this epoch
  // the earliest probe or receive of each message.
  std::map<int, std::vector<SendLimit>> limits_out;
  {
    std::unordered_map<std::int32_t, std::int64_t> earliest;
    for (const auto& c : cons) {
      auto [it, fresh] = earliest.emplace(c.link, static_cast<std::int64_t>(ev[c.event].time));
      if (!fresh) it->second = std::min(it->second, static_cast<std::int64_t>(ev[c.event].time));
    }
    for (const auto& [l, time] : earliest) {
      const SendRecord& r = matched[static_cast<std::size_t>(l)];
      if (r.epoch == static_cast<std::uint32_t>(epoch)) limits_out[r.src].push_back({r.seq, 0, time});
    }
  }
  // Enter event of a send call -> how far it may move: the least room of
  // the sends it started (MPI_Startall starts several); a send whose receive
  // is not known here may not move at all.
  std::unordered_map<std::uint64_t, std::int64_t> limit_of;  // (dest, seq) -> limit
  for (const auto& [dest, list] : co_await exchange_records(t, limits_out)) {
    for (const SendLimit& s : list) limit_of[send_key(dest, s.seq)] = s.limit;
  }
  std::unordered_map<std::size_t, std::int64_t> room;
  send_events.for_each([&](int dest, std::uint32_t seq, std::size_t i) {
    const std::size_t e = owner[i];
    if (e == kNoEvent) return;
    auto l = limit_of.find(send_key(dest, seq));
    const std::int64_t r =
        l == limit_of.end() ? 0 : std::max<std::int64_t>(l->second - static_cast<std::int64_t>(ev[e].time), 0);
    auto [it, fresh] = room.emplace(e, r);
    if (!fresh) it->second = std::min(it->second, r);
  });
  // Jumps: where a constraint raised the shift.  Each ramp reaches back at
  // most to the previous jump, so ramps never overlap.
  std::vector<std::int64_t> lift(n, 0);
  std::size_t prev_jump = 0;
  bool have_prev = false;
  for (const auto& c : cons) {
    const std::size_t r = c.event;
    const std::int64_t shift = fwd[r] - orig[r];
    const std::int64_t before = r > 0 ? fwd[r - 1] - orig[r - 1] : 0;
    const std::int64_t jump = shift - std::max<std::int64_t>(before, 0);
    if (jump <= 0 || r == 0) continue;
    const std::int64_t floor_t = have_prev ? orig[prev_jump] : orig[0];
    const double span =
        std::min(kRampFactor * static_cast<double>(jump), static_cast<double>(orig[r] - floor_t));
    prev_jump = r;
    have_prev = true;
    if (span <= 0) continue;
    const double start = static_cast<double>(orig[r]) - span;
    std::size_t first = r;
    while (first > 0 && static_cast<double>(orig[first - 1]) > start) --first;
    double scale = 1.0;
    for (std::size_t i = first; i < r; ++i) {
      auto it = room.find(i);
      if (it == room.end()) continue;
      const double want = static_cast<double>(jump) * (static_cast<double>(orig[i]) - start) / span;
      if (want > 0) scale = std::min(scale, static_cast<double>(it->second) / want);
    }
    for (std::size_t i = first; i < r; ++i) {
      lift[i] = static_cast<std::int64_t>(scale * static_cast<double>(jump) * (static_cast<double>(orig[i]) - start) /
                                          span);
    }
  }
  bool lifted = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (lift[i] <= 0) continue;
    ev[i].time = static_cast<std::uint64_t>(fwd[i] + lift[i]);
    lifted = true;
  }
  if (lifted) refresh_times(w, owner);
  co_await publish_sends();  // collective: every rank takes part (within the limits: no new violation)
  left = violations();

  if (n > 0) {  // (an empty window keeps the carry for the next)
    clock_carry = ev[n - 1].time > static_cast<std::uint64_t>(orig[n - 1]);
    carry_orig = orig[n - 1];
    carry_fwd = static_cast<std::int64_t>(ev[n - 1].time);
  }
  std::uint64_t found = 0;
  for (const auto& c : cons) found += c.violated ? 1 : 0;
  facts.clock_violations += found;
  facts.clock_violations_corrected += found - std::min(found, left);
}

void Analyzer::Impl::retire_times(const LocationWindow& w) {
  const LocationState& st = loc(w.location);
  open_recvs.for_each([&](std::uint32_t, OpenRecv& o) {
    if (o.post_epoch != epoch || o.post_event >= st.annot.size()) return;
    o.post_enter = st.annot[o.post_event].enter;
    o.post_leave = st.annot[o.post_event].leave;
  });
}

}  // namespace onlinews::analysis
