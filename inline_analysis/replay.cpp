// The epoch replay: annotate each location's window (call paths, region
// bounds), exchange and match messages, reduce collectives, then walk the
// window forward and backward, dispatching events to the patterns.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "engine.hpp"
#include "resident.hpp"

namespace onlinews::analysis {

const RegionDef* ReplayContext::region() const {
  const std::uint32_t cp = callpath();
  if (cp == kNoCallpath || cp >= s_.callpaths->size()) return nullptr;
  return s_.defs->region(s_.callpaths->node(cp).region);
}

bool selected(const std::vector<std::string>& selection, const char* name, const char* group) {
  if (std::strcmp(group, "time") == 0 || std::strcmp(group, "omp") == 0) return true;
  for (const auto& s : selection) {
    if (s == "all" || s == name || s == group) return true;
  }
  return false;
}

std::vector<std::string> effective_selection(std::vector<std::string> selection) {
  // The root causes explain the wait states that the p2p, collective and
  // RMA patterns find (their findings are the synchronization points).
  bool root = false;
  for (const auto& e : pattern_table()) {
    root = root || (std::strcmp(e.group, "rootcause") == 0 && selected(selection, e.name, e.group));
  }
  if (root) {
    selection.emplace_back("p2p");
    selection.emplace_back("collective");
    selection.emplace_back("rma");
  }
  return selection;
}

std::vector<std::string> unknown_selections(const std::vector<std::string>& selection) {
  std::vector<std::string> unknown;
  for (const auto& name : selection) {
    bool known = name == "all" || name == "none";
    for (const auto& e : pattern_table()) known = known || name == e.name || name == e.group;
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

std::string known_selections() {
  std::string names = "all, none";
  for (const auto& e : pattern_table()) names += std::string(", ") + e.name;
  return names + ", and the groups p2p, collective, rma, rootcause";
}

Analyzer::Impl::Impl(const Definitions& d, AnalysisOptions o) : defs(d), options(std::move(o)) {
  options.selection = effective_selection(options.selection);
  // The engine keeps the wait states of the MPI view for the backward
  // replay at synchronization points.
  dispatch.on_finding_fn<LateSenderFinding>([this](const LateSenderFinding& f, ReplayContext&) {
    late_sender_waits[f.event] = f.wait;
    if (traced(f.wait)) sync_in.late_senders.push_back(f);
  });
  dispatch.on_finding_fn<LateReceiverFinding>([this](const LateReceiverFinding& f, ReplayContext&) {
    if (traced(f.wait)) sync_in.late_receivers.push_back(f);
  });
  dispatch.on_finding_fn<CollectiveSyncFinding>(
      [this](const CollectiveSyncFinding& f, ReplayContext&) { sync_in.collectives.push_back(f); });
  dispatch.on_finding_fn<PairSyncFinding>([this](const PairSyncFinding& f, ReplayContext&) {
    if (traced(f.wait)) sync_in.pairs.push_back(f);
  });
  for (const auto& entry : pattern_table()) {
    if (!selected(options.selection, entry.name, entry.group)) continue;
    const bool time = std::strcmp(entry.group, "time") == 0, omp = std::strcmp(entry.group, "omp") == 0;
    patterns.push_back(entry.make());
    patterns.back()->subscribe(time ? time_dispatch : omp ? omp_dispatch : dispatch);
    (time || omp ? time_patterns : comm_patterns).push_back(patterns.back().get());
    pattern_names.emplace_back(entry.name);
  }
  dispatch.take_findings(time_dispatch);
  dispatch.take_findings(omp_dispatch);
  // Both walks in one pass over a location's window that is the MPI view:
  // one handler list per event.  The same with the OpenMP patterns.
  for (const Phase ph : {Phase::Forward, Phase::Backward}) {
    for (int k = 0; k < kEventKindCount; ++k) {
      const auto kind = static_cast<EventKind>(k);
      for (const auto* d : {&time_dispatch, &omp_dispatch}) {
        for (const auto& h : d->handlers(ph, kind)) time_omp_dispatch.on_event(ph, kind, h);
      }
      for (const auto* d : {&time_dispatch, &dispatch}) {
        for (const auto& h : d->handlers(ph, kind)) both_dispatch.on_event(ph, kind, h);
      }
      for (const auto* d : {&time_dispatch, &omp_dispatch, &dispatch}) {
        for (const auto& h : d->handlers(ph, kind)) both_omp_dispatch.on_event(ph, kind, h);
      }
    }
  }
}

Analyzer::Analyzer(const Definitions& defs, AnalysisOptions options)
    : impl_(std::make_unique<Impl>(defs, std::move(options))) {}
Analyzer::~Analyzer() = default;

const CallpathTree& Analyzer::callpaths() const { return impl_->callpaths; }
const Profile& Analyzer::profile() const { return impl_->profile; }
int Analyzer::epochs() const { return impl_->epoch; }
const std::vector<std::uint64_t>& Analyzer::retired_comms() const { return impl_->retired; }
std::vector<std::string> Analyzer::active_patterns() const { return impl_->pattern_names; }

Task<> Analyzer::Impl::annotate(LocationWindow& w, Scheduler& sched) {
  LocationState& st = loc(w.location);
  profile.ensure_location(w.location);
  const std::size_t n = w.events.size();
  st.window_first_frame = next_frame;
  // (A call open from the window before, e.g. a blocking send, ends here.)
  st.window_mpi = false;
  for (const Frame& f : st.stack) {
    const RegionDef* rd = defs.region(callpaths.node(f.callpath).region);
    st.window_mpi = st.window_mpi || (rd != nullptr && rd->kind == RegionKind::Mpi);
  }
  resize_resident(st.annot, n);  // every entry is written below: no fill
  assign_resident(st.links, n, decltype(st.links)::value_type(-1));
  assign_resident(st.marks, n, decltype(st.marks)::value_type(0));
  // Forward: call paths, enter times and frames from the persistent stack.
  for (std::size_t lo = 0; lo < n; lo += kSliceEvents) {
    annotate_range(w, st, lo, std::min(n, lo + kSliceEvents));
    if (lo + kSliceEvents < n) co_await sched.slice();
  }
  std::vector<std::int64_t> leaves;
  for (std::size_t hi = n; hi > 0;) {
    const std::size_t lo = hi > kSliceEvents ? hi - kSliceEvents : 0;
    fill_leaves(w, st, leaves, lo, hi);
    hi = lo;
    co_await sched.slice();
  }
}

void Analyzer::Impl::annotate_range(const LocationWindow& w, LocationState& st, std::size_t lo, std::size_t hi) {
  bool mpi = st.window_mpi, omp = omp_seen;
  for (std::size_t i = lo; i < hi; ++i) {
    const Event& e = w.events[i];
    const auto t = static_cast<std::int64_t>(e.time);
    EventAnnotation& a = st.annot[i];
    if (e.kind == EventKind::Enter) {
      omp = omp || e.team() != 0;
      const std::uint32_t parent = st.stack.empty() ? kNoCallpath : st.stack.back().callpath;
      const std::uint32_t cp = callpaths.child(parent, e.region(), e.site());
      st.stack.push_back({cp, t, next_frame++});
      a = {t, kOpen, cp, st.stack.back().frame};
      continue;
    }
    if (e.kind != EventKind::Leave) mpi = true;
    if (!st.stack.empty()) {
      const Frame& f = st.stack.back();
      a = {f.enter, kOpen, f.callpath, f.frame};
      if (e.kind == EventKind::Leave) st.stack.pop_back();
    } else {
      a = {t, kOpen, kNoCallpath, 0};  // unbalanced Leave: ignored by the patterns
    }
  }
  st.window_mpi = mpi;
  omp_seen = omp;
}

// Backward: each event learns when its enclosing region is left.
void Analyzer::Impl::fill_leaves(const LocationWindow& w, LocationState& st, std::vector<std::int64_t>& leaves,
                                 std::size_t lo, std::size_t hi) {
  for (std::size_t i = hi; i-- > lo;) {
    const Event& e = w.events[i];
    EventAnnotation& a = st.annot[i];
    if (e.kind == EventKind::Leave) {
      leaves.push_back(static_cast<std::int64_t>(e.time));
      a.leave = leaves.back();
    } else {
      a.leave = leaves.empty() ? kOpen : leaves.back();
      if (e.kind == EventKind::Enter && !leaves.empty()) leaves.pop_back();
    }
  }
}

// Every location's window goes through the time patterns; the MPI view
// through the others, in the same pass when it is a location's own window.
Task<> Analyzer::Impl::walk(Phase ph, std::vector<LocationWindow>& windows, Scheduler& sched) {
  ReplayContext::Sources src{&defs, &callpaths, &profile, &dispatch, epoch, defs.world_rank};
  ReplayContext ctx(src);
  ctx.set_remote(&matched, &replies, &colls);
  const bool comm = dispatch.any(ph);
  auto pass = [&](LocationWindow& w, bool with_time, bool with_comm) -> Task<> {
    LocationState& st = loc(w.location);
    ctx.set_location(w.location, &w.events, &st.annot, &st.links, &st.marks);
    ctx.set_origin(w.location == kViewLocation ? &view_loc : nullptr);
    const Dispatch& handlers = !with_comm ? (omp_seen ? time_omp_dispatch : time_dispatch)
                               : with_time ? (omp_seen ? both_omp_dispatch : both_dispatch)
                                           : dispatch;
    const std::size_t n = w.events.size();
    for (std::size_t k = 0; k < n; k += kWalkSlice) {
      walk_range(ph, w, st, handlers, with_comm, ctx, k, std::min(n, k + kWalkSlice));
      if (k + kWalkSlice < n) co_await sched.slice();
    }
    if (ph == Phase::Backward) {
      if (with_time) {
        for (Pattern* p : time_patterns) p->on_backward_done(ctx);
      }
      if (with_comm) {
        for (Pattern* p : comm_patterns) p->on_backward_done(ctx);
      }
    }
  };
  const bool time = (omp_seen ? time_omp_dispatch : time_dispatch).any(ph);
  for (auto& w : windows) {
    const bool with_comm = comm && &w == view;
    if (time || with_comm) co_await pass(w, time, with_comm);
  }
  if (comm && view_merged()) co_await pass(merged, false, true);
  ctx.set_origin(nullptr);
}

void Analyzer::Impl::walk_range(Phase ph, const LocationWindow& w, const LocationState& st, const Dispatch& handlers,
                                bool with_comm, ReplayContext& ctx, std::size_t lo, std::size_t hi) const {
  const std::size_t n = w.events.size();
  const bool forward = ph == Phase::Forward;
  for (std::size_t k = lo; k < hi; ++k) {
    const std::size_t i = forward ? k : n - 1 - k;
    const Event& e = w.events[i];
    if (st.annot[i].callpath == kNoCallpath) continue;
    const auto& hs = handlers.handlers(ph, e.kind);
    const auto& linked = dispatch.linked_handlers(ph, e.kind);
    if (hs.empty() && (!with_comm || linked.empty())) continue;
    ctx.set_index(i);
    for (const auto& h : hs) h(e, ctx);
    if (with_comm && !linked.empty() && st.links[i] >= 0) {
      for (const auto& h : linked) h(e, ctx);
    }
  }
}

Task<> Analyzer::Impl::run_sync_replay(LocationWindow& w, std::vector<LocationWindow>& windows, Transport& t) {
  LocationState& st = loc(w.location);
  sync_in.events = &w.events;
  sync_in.annot = &st.annot;
  sync_in.location = w.location;
  // Every location's window (the critical path passes through threads at
  // OpenMP barriers).
  for (const auto& lw : windows) {
    if (lw.events.empty()) continue;
    const auto l = static_cast<std::size_t>(lw.location);
    if (l >= sync_in.locations.size()) sync_in.locations.resize(l + 1);
    sync_in.locations[l] = {&lw.events, &loc(lw.location).annot};
  }
  // The window begins at its boundary, else at its first event.
  const bool free_begin = sync_in.bounds.begin == 0;
  sync_in.begin = !free_begin       ? sync_in.bounds.begin
                  : w.events.empty() ? 0
                                     : static_cast<std::int64_t>(w.events.front().time);
  if (view_merged()) {
    // Each point on its own location, whose window gives the time between
    // points; the window spans every location's events (where a requested
    // cut does not bound it).
    sync_in.origin = &view_loc;
    sync_in.origin_index = &view_idx;
    for (const auto& lw : windows) {
      if (lw.events.empty()) continue;
      const auto b = static_cast<std::int64_t>(lw.events.front().time);
      const auto e = static_cast<std::int64_t>(lw.events.back().time);
      if (free_begin) sync_in.begin = std::min(sync_in.begin, b);
      if (sync_in.bounds.ends_synchronized) sync_in.bounds.end = std::max(sync_in.bounds.end, e);
    }
  }
  sync_in.concurrent = concurrent;
  sync_in.epoch = static_cast<std::uint32_t>(epoch);
  sync_in.open_callpath = st.stack.empty() ? kNoCallpath : st.stack.back().callpath;
  ReplayContext::Sources src{&defs, &callpaths, &profile, &dispatch, epoch, defs.world_rank};
  ReplayContext ctx(src);
  co_await sync.run(sync_in, dispatch.sync_handlers(), ctx, t);
}

Task<EpochFacts> Analyzer::run_epoch(std::vector<LocationWindow>& windows, Transport& transport,
                                     WindowBounds bounds) {
  Impl& m = *impl_;
  Scheduler& sched = transport.scheduler();
  transport.begin_epoch(m.epoch);
  // Local work only (the scheduler counts the slices it resumed), not the
  // time spent waiting for other ranks.
  const double t0 = sched.busy_seconds();
  m.facts = EpochFacts{};
  m.facts.index = m.epoch;
  m.profile.reset_epoch();
  m.matched.clear();
  m.replies.clear();
  m.colls.clear();
  m.rma_results = RmaEpochResults{};
  m.completed.clear();
  m.outgoing.clear();
  m.send_refs.clear();
  m.earlier_refs.clear();
  m.coll_events.clear();
  m.send_events.clear();
  m.probed.clear();
  m.unreceived_linked.clear();
  m.late_sender_waits.clear();
  m.sync_in.reset(bounds);
  m.nb_results.clear();
  m.nb_new_neighbor_starts = false;

  std::sort(windows.begin(), windows.end(),
            [](const LocationWindow& a, const LocationWindow& b) { return a.location < b.location; });
  for (auto& w : windows) {
    co_await m.annotate(w, sched);
    co_await sched.slice();
    m.facts.events += w.events.size();
    m.facts.dropped_events += w.dropped;
  }
  co_await m.make_view(windows, sched);
  LocationWindow* mpi = m.view;

  m.retired.clear();
  if (m.comm_patterns.empty()) {  // no analysis needs the duplicates: release freed ones at once
    for (const auto& c : m.defs.comms) {
      if (c.freed) m.retired.push_back(c.gid);
    }
  }
  if (!m.comm_patterns.empty()) {
    for (std::size_t b = 0; b < mpi->events.size(); b += Impl::kSliceEvents) {
      m.collect_messages(*mpi, b, std::min(b + Impl::kSliceEvents, mpi->events.size()));
      co_await sched.slice();
    }
    // A lost communication event on any rank breaks message and collective
    // alignment for this window: agree on it and analyze time only.
    // And whether any rank has RMA accesses to report (exchange_fence_accesses).
    // And whether MPI calls of different threads overlapped on any rank: then
    // every rank keeps one sequence of synchronization points per thread
    // (sync_replay.hpp), so that both sides of a wait read their intervals
    // alike.
    // And whether neighborhood collectives started (their starts travel to
    // the neighbors).
    double agreed[4] = {m.view_dropped > 0 ? 1.0 : 0.0, m.has_rma() ? 1.0 : 0.0, m.concurrent ? 1.0 : 0.0,
                        m.nb_new_neighbor_starts ? 1.0 : 0.0};
    co_await transport.allreduce_max(agreed, 4);
    m.facts.comm_analysis_skipped = agreed[0] > 0;
    m.concurrent = agreed[2] > 0;
    co_await m.agree_comms(transport);
    co_await m.exchange_and_match(*mpi, transport);
    if (!m.facts.comm_analysis_skipped) {
      co_await m.correct_clocks(*mpi, transport);
      m.write_back_view(windows);
      co_await m.reduce_collectives(*mpi, transport);
      co_await m.reduce_nb(transport, agreed[3] > 0);
      if (agreed[1] > 0) co_await m.exchange_rma(*mpi, transport);
    } else {
      m.forget_rma();  // lost events: accesses and epochs can no longer be paired
      m.forget_nb();
      m.clock_carry = false;  // this window stays uncorrected: nothing to carry on from
    }
  }
  bool first = true;
  for (const auto& w : windows) {
    if (w.events.empty()) continue;
    const auto b = static_cast<std::int64_t>(w.events.front().time);
    const auto e = static_cast<std::int64_t>(w.events.back().time);
    m.facts.t_begin = first ? b : std::min(m.facts.t_begin, b);
    m.facts.t_end = first ? e : std::max(m.facts.t_end, e);
    first = false;
  }
  co_await m.walk(Phase::Forward, windows, sched);
  if (!m.comm_patterns.empty()) co_await m.exchange_replies(*mpi, transport);
  const double t1 = sched.busy_seconds();
  co_await m.walk(Phase::Backward, windows, sched);
  ReplayContext::Sources src{&m.defs, &m.callpaths, &m.profile, &m.dispatch, m.epoch, m.defs.world_rank};
  {
    ReplayContext ctx(src);
    for (auto& p : m.patterns) p->on_walks_done(ctx);
  }
  {
    // What the exchanges with partners completed in this epoch.
    ReplayContext::Sources done = src;
    done.rma = &m.rma_results;
    done.nbc = &m.nb_results;
    ReplayContext ctx(done);
    for (auto& p : m.patterns) p->on_rma_epochs(ctx);
    for (auto& p : m.patterns) p->on_nb_collectives(ctx);
  }
  if (!m.comm_patterns.empty() && !m.facts.comm_analysis_skipped && !m.dispatch.sync_handlers().empty()) {
    co_await m.run_sync_replay(*mpi, windows, transport);
    m.facts.truncated_intervals = m.sync.truncated();
    m.facts.unattributed_longterm_seconds = m.sync.unattributed();
    m.facts.approximate_path_seconds = m.sync.approximate_path();
    m.facts.crossing_sync_sends += m.sync.unexplained();
    m.facts.unexplained_rma_waits = m.sync.unexplained_pairs();
    m.facts.unexplained_rma_wait_seconds = m.sync.unexplained_pair_seconds();
    m.facts.guessed_critical_paths = m.sync.guessed_paths();
  } else if (m.facts.comm_analysis_skipped) {
    m.sync.forget_intervals();
  }
  {
    ReplayContext ctx(src);
    for (auto& p : m.patterns) p->on_epoch_end(ctx);
  }
  if (!m.comm_patterns.empty()) m.retire_times(*mpi);
  if (m.realign > 0 && !m.facts.comm_analysis_skipped) --m.realign;
  ++m.epoch;
  m.facts.forward_seconds = t1 - t0;
  m.facts.backward_seconds = sched.busy_seconds() - t1;
  co_return m.facts;
}

}  // namespace onlinews::analysis
