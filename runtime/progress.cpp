#include "progress.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cut_protocol.hpp"
#include "io/h5output.hpp"
#include "pipeline.hpp"
#include "regions.hpp"
#include "state.hpp"

namespace onlinews::rt {

constinit thread_local std::uint64_t t_progress_gate = UINT64_MAX;
constinit thread_local bool t_analysis_pending = false;
constinit thread_local std::uint64_t t_slice_since = 0;

namespace {

// MPI thread, during a slice of progress() (t_slice_since != 0): whether
// its region will be recorded (not inside a polling loop), and whether its
// Enter is recorded already (slice_enter_before_boundary).
constinit thread_local bool t_slice_recorded = false;
constinit thread_local bool t_slice_entered = false;

// Gates, in ns (converted to raw ticks by init_progress()).
constexpr double kIdleGateNs = 100'000;   // nothing to analyze: poll the cut protocol ...
constexpr double kIdleGateMaxNs = 1'000'000;  // ... backing off to this while nothing happens
constexpr double kRemoteGateNs = 5'000;   // the analysis waits for other ranks' messages
constexpr double kHelperGateNs = 20'000;  // the analysis thread has it: look for hand-overs
constexpr double kRecordNs = 2'000;       // shorter progress is not recorded as a region
// Where the local analysis runs (docs/design.md, "The analysis thread" and
// "Analysis in waiting time"): on the analysis thread when there is one,
// else (and when the buffers fill up) on this thread: inside the
// application's blocking waits, in slices of kWaitSlice
// (patient.cpp), where the application waits anyway and a message that
// arrives during a slice is taken at most that much later; and at wrapper
// entries, kSlice at a time and at most kSliceShare of the thread's time
// while the buffers have room (everything it needs once they fill up).
// Holding the entry slices back while the analysis is recent, so that more
// of it lands in waits, was measured and not kept (docs/design.md).
constexpr std::chrono::nanoseconds kWaitSlice{30'000};
constexpr std::chrono::nanoseconds kSlice{500'000};
constexpr double kSliceShare = 0.5;
constexpr double kMaxGapNs = 2'000'000;  // longest pause between slices while work is pending

double g_ticks_per_ns = 1.0;
// Text of libhdf5 (0: unknown), set at start-up: only rank 0 appends to
// the file while the application runs, and it has loaded the io module by
// then (hooks_init.cpp); other ranks see the application's HDF5, if any.
std::uintptr_t g_hdf5_lo = 0, g_hdf5_hi = 0;
bool t_inside_hdf5 = false;                   // MPI thread only

std::uint64_t ticks(double ns) { return static_cast<std::uint64_t>(ns * g_ticks_per_ns); }

void find_hdf5() {
  const void* f = io::hdf5_function();
  if (f == nullptr) return;
  const TextRange r = text_range_of(f);
  g_hdf5_lo = r.lo;
  g_hdf5_hi = r.hi;
}

bool inside_hdf5(std::uintptr_t a) { return g_hdf5_hi != 0 && a >= g_hdf5_lo && a < g_hdf5_hi; }

// The tool's part of a progress point: buffers, cut protocol, `budget` of
// analysis (0: until it waits for other ranks); local work too if
// `compute`.  Keeps t_analysis_pending.
Pipeline::Wait step(State& s, const void* caller, std::chrono::nanoseconds budget, bool in_wait, bool compute) {
  const auto a = reinterpret_cast<std::uintptr_t>(caller);
  t_inside_hdf5 = inside_hdf5(a);
  Pipeline::Wait w;
  {
    ToolScope tool;
    s.pipeline->relieve();
    s.cuts->poll();
    w = s.pipeline->advance(budget, compute);
    // The application never runs between the parts of an append; inside a
    // wait that happens when the wait ends (progress_wait_done()).
    if (!in_wait && s.appending && !t_inside_hdf5) s.pipeline->finish_append();
  }
  t_inside_hdf5 = false;
  t_analysis_pending = s.cfg.patient_waits && w != Pipeline::Wait::Done && s.pipeline->has_work();
  return w;
}

// The idle poll's back-off (MPI thread only: plain globals).  An unsuccessful MPI_Test is not
// free: Open MPI on an oversubscribed node (mpi_yield_when_idle) gives the
// core away in it, a context switch per poll in the application's compute
// phases (an 8-rank sweep on 2 cores: ~10 % of a rank's samples in the
// cut protocol's MPI_Test).  While nothing happens the gap doubles up to
// kIdleGateMaxNs, never beyond half the time the fullest buffer needs, at
// the rate it filled since the last poll, to reach kCutFill (where this
// rank asks for a cut), or past that half full (where the pipeline drains
// it).
double g_idle_ns = kIdleGateNs;
double g_last_fill = 0;
std::uint64_t g_last_poll = 0;

std::uint64_t idle_gate(const State& s, std::uint64_t t1) {
  double fill = 0;
  for (int i = 0; i < s.buffers.count(); ++i) {
    if (const ThreadBuffer* b = s.buffers.at(i)) fill = std::max(fill, b->fill());
  }
  double gap = g_idle_ns;
  if (fill > g_last_fill && t1 > g_last_poll && g_last_poll != 0) {
    const double per_ns = (fill - g_last_fill) / (static_cast<double>(t1 - g_last_poll) / g_ticks_per_ns);
    const double next = fill < kCutFill ? kCutFill : kDrainFill;
    gap = std::min(gap, 0.5 * std::max(next - fill, 0.0) / per_ns);
  }
  gap = std::max(gap, kIdleGateNs);
  g_idle_ns = std::min(2 * g_idle_ns, kIdleGateMaxNs);
  g_last_fill = fill;
  g_last_poll = t1;
  return t1 + ticks(gap);
}

// Next gate after progress that ended at `t1` having taken `took` ticks.
std::uint64_t next_gate(const State& s, Pipeline::Wait w, std::uint64_t t1, std::uint64_t took) {
  if (w == Pipeline::Wait::Remote && !s.pipeline->has_work()) return idle_gate(s, t1);
  g_idle_ns = kIdleGateNs;
  g_last_poll = 0;
  switch (w) {
    case Pipeline::Wait::Done: return UINT64_MAX;
    case Pipeline::Wait::Slice:
      // (A slice may overrun its budget by a step that cannot be split.)
      return t1 + std::min(static_cast<std::uint64_t>(static_cast<double>(took) / kSliceShare - static_cast<double>(took)),
                           ticks(kMaxGapNs));
    case Pipeline::Wait::Helper: return t1 + ticks(kHelperGateNs);
    case Pipeline::Wait::Remote: break;
  }
  return t1 + ticks(kRemoteGateNs);
}

thread_local std::uint64_t t_wait_gate = 0;  // progress_while_waiting(): next slice

}  // namespace

bool progress_inside_hdf5() { return t_inside_hdf5; }

void init_progress() {
  const ClockMapper::Pair a = ClockMapper::sample();
  // The TSC rate is refined at every drain; a first estimate is enough here.
  const std::uint64_t t0 = monotonic_ns();
  while (monotonic_ns() - t0 < 200'000) {
  }
  const ClockMapper::Pair b = ClockMapper::sample();
  if (b.ns > a.ns && b.raw > a.raw) g_ticks_per_ns = static_cast<double>(b.raw - a.raw) / static_cast<double>(b.ns - a.ns);
  find_hdf5();
  t_progress_gate = raw_now();
}

void progress(const void* caller, std::uint32_t region) {
  State* s = state();
  if (s == nullptr || t_in_tool > 0 || s->pipeline == nullptr) {
    t_progress_gate = UINT64_MAX;
    return;
  }
  const std::uint64_t t0 = raw_now();
  // While the MPI thread's buffer fills up, the analysis takes what it
  // needs (local work only: it never waits for another rank here).
  ThreadBuffer* mb = s->buffers.at(0);
  const bool pressed = mb != nullptr && 4 * s->pipeline->open_events() >= 3 * mb->capacity();
  // Inside a polling loop (the coming call continues it) the slice stays
  // part of the loop's one visit: the application was waiting there anyway,
  // and a region inside it would end the visit.
  ThreadBuffer* b = t_buffer;
  t_slice_recorded = b == nullptr || !b->polling(region, caller);
  t_slice_entered = false;
  t_slice_since = t0;
  // (Test knob: a slice descheduled before its first step, as on a loaded
  // node; docs/design.md, "Requested cuts".)
  if (s->cfg.test_slow_slice > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s->cfg.test_slow_slice));
  const Pipeline::Wait w = step(*s, caller, pressed ? std::chrono::nanoseconds(0) : kSlice, false, pressed);
  t_slice_since = 0;
  const std::uint64_t t1 = raw_now();
  if (t_slice_entered) {
    record_leave(t1);
  } else if (t1 - t0 >= ticks(kRecordNs) && t_slice_recorded) {
    record_enter(t0, tool_region_analysis());
    record_leave(t1);
  }
  t_progress_gate = next_gate(*s, w, t1, t1 - t0);
}

void slice_enter_before_boundary() {
  if (t_slice_since == 0 || !t_slice_recorded || t_slice_entered) return;
  record_enter(t_slice_since, tool_region_analysis());
  t_slice_entered = true;
}

void progress_wait_done(const void* caller) {
  State* s = state();
  if (s == nullptr || !s->appending || s->pipeline == nullptr) return;
  const auto a = reinterpret_cast<std::uintptr_t>(caller);
  t_inside_hdf5 = inside_hdf5(a);
  if (!t_inside_hdf5) {
    ToolScope tool;
    s->pipeline->finish_append();
  }
  t_inside_hdf5 = false;
}

bool progress_while_waiting(const void* caller) {
  State* s = state();
  if (s == nullptr || t_in_tool > 0 || s->pipeline == nullptr) return false;
  const std::uint64_t t0 = raw_now();
  if (t0 < t_wait_gate) return t_analysis_pending;
  const Pipeline::Wait w = step(*s, caller, kWaitSlice, true, true);
  const std::uint64_t t1 = raw_now();
  t_wait_gate = w == Pipeline::Wait::Remote   ? t1 + ticks(kRemoteGateNs)
                : w == Pipeline::Wait::Helper ? t1 + ticks(kHelperGateNs)
                                              : t1;
  if (w == Pipeline::Wait::Done) t_progress_gate = UINT64_MAX;
  return t_analysis_pending;
}

}  // namespace onlinews::rt
