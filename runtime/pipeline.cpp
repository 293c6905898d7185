#include "pipeline.hpp"

#include <algorithm>
#include <cstdio>

#include "mpi_transport.hpp"
#include "progress.hpp"
#include "regions.hpp"
#include "sampling.hpp"
#include "shared_guard.hpp"
#include "state.hpp"

namespace onlinews::rt {
namespace {

// A thread other than the MPI thread may have read its clock before a
// boundary and pushed the event a little after the pipeline drained: its
// part of a window is taken as complete this long after the boundary.
constexpr std::uint64_t kGraceNs = 2'000'000;
// A thread inside a call that records its send's start after returning,
// dated at its Enter (region_attr::kStartsSend: MPI_Send, MPI_Sendrecv,
// MPI_Isend, MPI_Start, ...), may add that event long after the boundary:
// the partner may have received the message before it, and a window cut
// without the send leaves that receive unmatched (mpi.thread_ring with
// requested cuts: a descheduled sender's MPI_Send returned 12 ms after the
// boundary it entered before).  Its part waits for the call's Leave, this
// long at most (a synchronous send whose receiver comes late may block for
// longer; its message is then received after the boundary, and both ends
// fall into the next window).
constexpr std::uint64_t kOpenSendGraceNs = 1'000'000'000;

// Local work the MPI thread does itself when it resumes the pipeline
// without computing (Scheduler::try_resume): the few microseconds between
// two transport operations cost less than two hand-overs, each of which
// waits for this thread's next MPI call.
constexpr std::chrono::nanoseconds kGrace{50'000};

// Group time of event i (see pipeline.hpp): completion events take the time
// of the call's Leave that follows them; `next_leave` is that time as seen
// by a backward scan (UINT64_MAX while none was seen).
std::uint64_t group_time(const Event& e, std::uint64_t next_leave) {
  return completes_call(e.kind) ? next_leave : e.time;
}

// Whether the stream ends inside a call, entered before t, that will still
// record a send's start dated at its Enter (kOpenSendGraceNs).
bool in_send_start(const std::vector<Event>& ev, std::uint64_t t) {
  for (std::size_t i = ev.size(); i > 0; --i) {
    const Event& e = ev[i - 1];
    if (e.kind == EventKind::Leave) return false;
    if (e.kind == EventKind::Enter) {
      return e.time < t && (mpi_region_attrs(e.region()) & analysis::region_attr::kStartsSend) != 0;
    }
  }
  return false;
}

// First index in [0, end) from which every event's group time is >= t (the
// group times of a stream never decrease).
std::size_t split_index(const std::vector<Event>& ev, std::size_t end, std::uint64_t t) {
  std::uint64_t next_leave = UINT64_MAX;
  std::size_t i = end;
  while (i > 0) {
    const Event& e = ev[i - 1];
    if (e.kind == EventKind::Leave) next_leave = e.time;
    if (group_time(e, next_leave) < t) break;
    --i;
  }
  return i;
}

// ONLINEWS_VERBOSE=3: every event of a window, for debugging the recording.
void dump_windows(const State& s, const std::vector<analysis::LocationWindow>& windows) {
  for (const auto& w : windows) {
    for (const auto& e : w.events) {
      std::fprintf(stderr, "onlinews[%d.%d]: %.9f %-13s", s.rank, w.location,
                   1e-9 * (static_cast<double>(e.time) - static_cast<double>(s.start_ns)), event_kind_name(e.kind));
      switch (payload_of(e.kind)) {
        case EventPayload::None:
          std::fprintf(stderr, "\n");
          break;
        case EventPayload::Region: {
          const auto* r = s.defs.region(e.region());
          std::fprintf(stderr, " %s\n", r != nullptr ? r->name.c_str() : "(unpublished region)");
          break;
        }
        case EventPayload::Message:
          std::fprintf(stderr, " comm %u peer %d tag %d bytes %llu request %u flags %u\n", e.comm, e.peer, e.tag,
                       static_cast<unsigned long long>(e.bytes), e.request, e.flags);
          break;
        case EventPayload::Request:
          std::fprintf(stderr, " request %u flags %u\n", e.request, e.flags);
          break;
        case EventPayload::Collective:
          std::fprintf(stderr, " comm %u root %d bytes out %llu in %llu\n", e.comm, e.root(),
                       static_cast<unsigned long long>(e.bytes_out()), static_cast<unsigned long long>(e.bytes_in()));
          break;
        case EventPayload::RmaSync:
          std::fprintf(stderr, " window %u group %u target %d flags %u\n", e.comm, e.group(), e.target(), e.flags);
          break;
        case EventPayload::Rma:
          std::fprintf(stderr, " window %u target %d bytes out %llu in %llu\n", e.comm, e.target(),
                       static_cast<unsigned long long>(e.bytes_out()), static_cast<unsigned long long>(e.bytes_in()));
          break;
      }
    }
  }
}

}  // namespace

Pipeline::Pipeline(State& s) : s_(s) {}
Pipeline::~Pipeline() = default;

void Pipeline::add_boundary(const Boundary& b) {
  boundaries_.push_back(b);
  // MPI_T performance variables at the cut (written with its epoch).
  if (!s_.pvars.names().empty()) s_.pvar_samples[b.number] = s_.pvars.sample();
  t_progress_gate = 0;  // the next wrapper entry sees the new work (analysis_pending())
}

std::size_t Pipeline::open_events() const {
  const ThreadBuffer* b = s_.buffers.at(0);
  const std::size_t queued = b != nullptr ? b->size() : 0;
  return queued + (pending_.empty() ? 0 : pending_[0].size());
}

void Pipeline::drain(bool all) {
  const int n = s_.buffers.count();
  const bool sampling = sampling_on() || !placers_.empty();
  if (pending_.size() < static_cast<std::size_t>(n)) {
    pending_.resize(static_cast<std::size_t>(n));
    dropped_.resize(static_cast<std::size_t>(n), 0);
  }
  if (sampling && placers_.size() < static_cast<std::size_t>(n)) {
    if (!sample_names_) sample_names_ = make_sample_names([this](std::uint64_t raw) { return global_ns(s_, raw); });
    placers_.resize(static_cast<std::size_t>(n), SamplePlacer(sample_half_span_ns()));
  }
  bool clock_read = false;
  for (int i = 0; i < n; ++i) {
    ThreadBuffer* b = s_.buffers.at(i);
    auto& p = pending_[static_cast<std::size_t>(i)];
    if (b == nullptr) continue;
    // Memory stays bounded: while no boundary waits, what the pipeline has
    // not cut into windows yet may grow to one buffer's worth; beyond that
    // the buffer fills up and drops events (counted), the last resort.  A
    // window being cut takes everything (up to two buffers' worth): events
    // left in the buffer would land in the wrong window.
    const bool events = all || (static_cast<double>(b->size()) >= kDrainFill * static_cast<double>(b->capacity()) &&
                                p.size() < b->capacity());
    const bool samples = sampling && (all || events || sample_fill(i) >= 0.5);
    if (!events && !samples) continue;
    if (!clock_read) {
      s_.clock.advance(ClockMapper::sample());
      std::uint64_t prev = last_.time;
      for (Boundary& bd : boundaries_) {
        if (!bd.mapped) {
          // 1 ns past the cut collective's Leave once mapped (raw ticks are
          // finer than ns): the collective stays in the window it ends.  A
          // requested cut with a limit (CutProtocol::catch_up) lies no later
          // than that.
          const std::uint64_t at = global_ns(s_, bd.raw);
          bd.time = (bd.kind & cutkind::kRequested) != 0 ? std::min(bd.time, at) : at + 1;
          bd.mapped = true;
        }
        // Never before the boundary before it: a window may be empty, never
        // reversed.
        bd.time = std::max(bd.time, prev);
        prev = bd.time;
      }
      clock_read = true;
    }
    const std::size_t first = p.size();
    if (events) {
      // (global_ns with both maps copied: the same arithmetic.)
      const ClockMapper local = s_.clock;
      const ClockSync::Map global = s_.clock_sync.map();
      const bool tsc = g_use_tsc;
      b->drain(p, [local, global, tsc](std::uint64_t raw) { return global(tsc ? local.tsc_to_ns(raw) : raw); });
      dropped_[static_cast<std::size_t>(i)] += b->take_dropped();
      if (b == t_buffer) b->rewind_if_empty();  // (this thread pushes to it only between drains)
    }
    if (samples) {
      // (After the events: a sample older than a drained event was in its
      // ring before that event was in the buffer.)
      take_samples(i, fresh_);
      SamplePlacer& placer = placers_[static_cast<std::size_t>(i)];
      if (events) {
        placer.place(p, first, fresh_, *sample_names_);
      } else {
        placer.hold(fresh_);
      }
    }
  }
  if (all) {
    const std::uint64_t lost = s_.buffers.unregistered_drops();
    if (!dropped_.empty()) dropped_[0] += lost - s_.totals.dropped_unregistered;
    s_.totals.dropped_unregistered = lost;
  }
}

void Pipeline::relieve() {
  drain(false);
  // (After the drain: the MPI thread's ring may just have rewound.)
  for (int i = 0; i < s_.buffers.count(); ++i) {
    if (ThreadBuffer* b = s_.buffers.at(i)) b->populate_ahead();
  }
}

Pipeline::SampleCounts Pipeline::sample_counts() const {
  SampleCounts c;
  for (const SamplePlacer& p : placers_) {
    c.placed += p.placed();
    c.outside += p.outside();
    c.late += p.late();
  }
  return c;
}

void Pipeline::reuse_window_storage(std::vector<analysis::LocationWindow>& windows) {
  // The last window is analyzed: its storage takes the drained events that
  // wait (in steady state the few after the last cut) and then the
  // buffers' events, and becomes the next window (take_window).  Swapping the two
  // vectors at every cut instead kept both at a window's size, resident
  // (4.3 MiB more per rank in the 2-rank ring).  While the analysis lags,
  // the drained events are many and stay where they are.
  for (std::size_t l = 0; l < windows.size() && l < pending_.size(); ++l) {
    auto& w = windows[l].events;
    auto& p = pending_[l];
    if (4 * p.size() >= w.capacity()) continue;
    w.assign(p.begin(), p.end());
    w.swap(p);
  }
}

bool Pipeline::take_window(std::vector<analysis::LocationWindow>& windows, Boundary& b) {
  if (boundaries_.empty()) return false;  // (progress() relieves the buffers before every slice)
  drain(true);
  Boundary& next = boundaries_.front();
  if (!next.mapped) return false;  // (mapped by the drain above once it ran)
  const std::uint64_t t = next.time;
  // The MPI thread's part is complete: boundaries are added on that thread,
  // after everything it recorded before them.  Other threads' parts are
  // complete once an event at or after the boundary has arrived, or a
  // grace period later.
  const std::uint64_t now = global_ns(s_, raw_now());
  std::vector<std::size_t> cut(pending_.size());
  for (std::size_t l = 0; l < pending_.size(); ++l) {
    cut[l] = split_index(pending_[l], pending_[l].size(), t);
    if (l > 0 && cut[l] == pending_[l].size() && now < t + kGraceNs) return false;
    if (l > 0 && now < t + kOpenSendGraceNs && in_send_start(pending_[l], t)) return false;
  }
  // Samples: those before the boundary that wait for a later event go into
  // this window (they follow every event of it: a location whose events
  // all lie before the boundary) -- up to where the thread's time is not
  // the application's: this slice of the tool's work on the MPI thread, a
  // poll call in progress on another (their regions are recorded later;
  // a slice's Enter before the boundary, if one was added inside it).
  if (!placers_.empty() && !sampling_handler_intact()) {
    log_warning("ONLINEWS_SAMPLING: the application installed its own SIGPROF handler; sampling stopped", false);
  }
  for (std::size_t l = 0; l < placers_.size() && l < pending_.size(); ++l) {
    const bool whole = cut[l] == pending_[l].size();
    const ThreadBuffer* b = s_.buffers.at(static_cast<int>(l));
    const std::uint64_t busy = l == 0 ? t_slice_since : b != nullptr ? b->poll_since() : 0;
    placers_[l].flush(pending_[l], t, busy != 0 ? std::min(t, global_ns(s_, busy)) : t, *sample_names_);
    if (whole) cut[l] = pending_[l].size();
  }
  windows.resize(pending_.size());
  for (std::size_t l = 0; l < pending_.size(); ++l) {
    auto& w = windows[l];
    auto& p = pending_[l];
    w.location = static_cast<int>(l);
    // The window takes the drained events' storage and gives back its own
    // with the events after the cut: one copy of the (short) tail instead
    // of the window's events plus a move of the tail.
    w.events.swap(p);
    p.assign(w.events.begin() + static_cast<std::ptrdiff_t>(cut[l]), w.events.end());
    w.events.resize(cut[l]);
    w.dropped = dropped_[l];
    dropped_[l] = 0;
  }
  b = next;
  boundaries_.pop_front();
  return true;
}

void Pipeline::refresh_definitions(const Boundary& b) {
  // The analysis reads its own copy, which changes only between epochs: the
  // application may create communicators while an epoch is analyzed.
  publish_regions(s_.defs.regions);
  s_.mixed_comms = std::max(s_.mixed_comms, s_.comms.publish_mixed());
  s_.comms.publish_freed(b.time);
  analysis::Definitions& d = s_.analysis_defs;
  for (std::size_t i = d.regions.size(); i < s_.defs.regions.size(); ++i) d.regions.push_back(s_.defs.regions[i]);
  d.comms = s_.defs.comms;
  {
    SharedGuard guard;  // (groups grow on the MPI thread)
    for (std::size_t i = d.groups.size(); i < s_.defs.groups.size(); ++i) d.groups.push_back(s_.defs.groups[i]);
  }
  d.world_rank = s_.defs.world_rank;
  d.world_size = s_.defs.world_size;
  d.eager_limit_local = s_.defs.eager_limit_local;
  d.eager_limit_remote = s_.defs.eager_limit_remote;
  d.host_of_rank = s_.defs.host_of_rank;
}

void Pipeline::keep_reference(const std::vector<analysis::LocationWindow>& windows) {
  if (reference_.size() < windows.size()) reference_.resize(windows.size());
  for (std::size_t l = 0; l < windows.size(); ++l) {
    auto& r = reference_[l];
    r.location = windows[l].location;
    r.events.insert(r.events.end(), windows[l].events.begin(), windows[l].events.end());
    r.dropped += windows[l].dropped;
  }
}

analysis::Task<> Pipeline::loop() {
  analysis::Scheduler& sched = s_.transport->scheduler();
  co_await sched.next_tick();  // every slice runs through Scheduler::try_resume (its time is counted)
  std::vector<analysis::LocationWindow> windows;
  for (;;) {
    // (The MPI thread's part: buffers, definitions, the file.)
    Boundary b;
    reuse_window_storage(windows);
    while (!take_window(windows, b)) co_await sched.next_tick();
    in_window_ = true;
    if (s_.cfg.test_stall && s_.rank == 1 && (b.kind & cutkind::kFinal) != 0) {
      for (;;) co_await sched.next_tick();  // (test: an analysis that waits for the others forever)
    }
    refresh_definitions(b);
    if (s_.cfg.verbose >= 3) dump_windows(s_, windows);
    if (!s_.cfg.test_reference.empty()) keep_reference(windows);
    const double busy = sched.busy_seconds();
    analysis::WindowBounds bounds;
    bounds.starts_synchronized = (last_.kind & cutkind::kSync) != 0;
    bounds.ends_synchronized = (b.kind & cutkind::kSync) != 0;
    bounds.last = (b.kind & cutkind::kFinal) != 0;
    bounds.begin = static_cast<std::int64_t>(last_.time);
    bounds.end = static_cast<std::int64_t>(b.time);
    last_ = b;
    co_await sched.to_any();  // the analysis thread's, apart from its transport operations
    const analysis::EpochFacts facts = co_await s_.analyzer->run_epoch(windows, *s_.transport, bounds);
    co_await sched.to_driver();
    co_await write_epoch_output(s_, facts, sched.busy_seconds() - busy, b.kind);
    in_window_ = false;
    if (finishing_) co_await sched.next_tick();  // back to finish_append()
    // Communicators every member freed (agreed in this epoch) are released
    // now that no epoch needs them any more -- except under
    // ONLINEWS_TEST_REFERENCE, whose one-epoch analysis at MPI_Finalize
    // replays their instances too (reference.cpp; MPI_Finalize releases them).
    if (s_.cfg.test_reference.empty()) s_.comms.retire(s_.analyzer->retired_comms());
    if ((b.kind & cutkind::kFinal) != 0) co_return;
  }
}

analysis::Task<> Pipeline::run() {
  try {
    co_await loop();
  } catch (const std::exception& e) {
    error_ = std::string("the analysis failed (") + e.what() + "); results stop at the last finished epoch";
  } catch (...) {
    error_ = "the analysis failed; results stop at the last finished epoch";
  }
  co_await s_.transport->scheduler().finish();  // never resumed: the MPI thread sees it and ends the pipeline
}

void Pipeline::finish_append() {
  // (The append waits only while the caller is inside HDF5: progress()
  // never starts an append there, and then a few resumptions end it.)
  finishing_ = true;
  for (int i = 0; i < 1000 && s_.appending && !finished_; ++i) advance(std::chrono::nanoseconds(0), false);
  finishing_ = false;
}

Pipeline::Wait Pipeline::advance(std::chrono::nanoseconds budget, bool compute) {
  if (finished_) return Wait::Done;
  analysis::Scheduler& sched = s_.transport->scheduler();
  compute = compute || !sched.split();
  if (!started_) {
    started_ = true;
    task_ = run();
    sched.set_budget(budget);
    task_.start();
  } else {
    sched.try_resume(false, compute, budget, kGrace);
  }
  switch (sched.where()) {
    case analysis::Where::Finished:
      finished_ = true;
      if (!error_.empty()) {
        failed_ = true;
        log_warning(error_, false);
      }
      return Wait::Done;
    case analysis::Where::Driver: return sched.waiting_for_remote() ? Wait::Remote : Wait::Slice;
    case analysis::Where::Any: return compute ? Wait::Slice : Wait::Helper;
    case analysis::Where::Running: break;
  }
  return Wait::Helper;  // the analysis thread runs it
}

}  // namespace onlinews::rt
