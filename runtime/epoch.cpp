// Epochs (DESIGN.md §4): cuts are taken inside collectives that span all
// ranks and synchronize them (Barrier, Allreduce, Allgather(v), Alltoall(v/w),
// Reduce_scatter(_block)), counted per communicator so that "the k-th such
// collective on C" names the same point on every rank.  Every N-th one, a
// small allreduce on the tool's duplicate of C decides whether to cut; N
// adapts so that decisions cost little whatever the collective rate.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "mpi_transport.hpp"
#include "regions.hpp"
#include "state.hpp"

namespace onlinews::rt {
namespace {

// Decide at most this often (seconds), and at least this often while the
// epoch target is finite.
double decision_spacing(double epoch_seconds) {
  if (!std::isfinite(epoch_seconds)) return 0.25;
  return std::clamp(epoch_seconds / 20.0, 0.005, 0.25);
}

double max_fill(State& s) {
  double f = 0;
  for (int i = 0; i < s.buffers.count(); ++i) {
    if (ThreadBuffer* b = s.buffers.at(i)) f = std::max(f, b->fill());
  }
  return f;
}

// ONLINEWS_VERBOSE=3: every drained event, for debugging the recording.
void dump_windows(const State& s) {
  static const char* const kKinds[] = {"Enter", "Leave", "Send", "Recv", "SendRequest", "SendComplete",
                                       "RecvRequest", "RecvComplete", "CollectiveEnd", "Probe", "Match"};
  for (const auto& w : s.windows) {
    for (const auto& e : w.events) {
      const auto k = static_cast<std::size_t>(e.kind);
      std::fprintf(stderr, "onlinews[%d.%d]: %.9f %-13s", s.rank, w.location,
                   1e-9 * (static_cast<double>(e.time) - static_cast<double>(s.start_ns)),
                   k < std::size(kKinds) ? kKinds[k] : "?");
      if (e.kind == EventKind::Enter) {
        const auto* r = s.defs.region(e.region());
        std::fprintf(stderr, " %s\n", r != nullptr ? r->name.c_str() : "(unpublished region)");
      } else if (e.kind == EventKind::Leave) {
        std::fprintf(stderr, "\n");
      } else {
        std::fprintf(stderr, " comm %u peer %d tag %d bytes %llu request %u flags %u\n", e.comm, e.peer, e.tag,
                     static_cast<unsigned long long>(e.bytes), e.request, e.flags);
      }
    }
  }
}

}  // namespace

void on_eligible_collective(int comm_id) {
  State* sp = state();
  if (sp == nullptr || !g_recording.load(std::memory_order_relaxed) || !on_mpi_thread()) return;
  State& s = *sp;
  CommRecord& r = s.comms.rec(comm_id);
  if (!r.spans_world || r.tool == MPI_COMM_NULL) return;
  if (s.cfg.epoch_seconds == 0.0) {  // test mode: cut at every eligible collective
    run_epoch(false);
    return;
  }
  if (++r.since_decision < r.decision_every) return;

  const std::uint64_t t0 = raw_now();
  record_enter(t0, tool_region_decide());
  const std::uint64_t now_ns = monotonic_ns();
  if (r.last_decision_ns == 0) r.last_decision_ns = s.last_epoch_ns;
  // [0] fill of the fullest buffer, [1] seconds since the last epoch,
  // [2] seconds the last `decision_every` collectives took, [3] 1 if a rank
  // cannot be cut now (later steps: open RMA epochs, OpenMP regions).
  double v[4] = {max_fill(s), 1e-9 * static_cast<double>(now_ns - s.last_epoch_ns),
                 1e-9 * static_cast<double>(now_ns - r.last_decision_ns), 0.0};
  {
    ToolScope tool;
    PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_MAX, r.tool);
  }
  record_leave(raw_now());
  // Identical inputs on every rank, so every rank computes the same N: often
  // enough for the time target, and often enough that the fullest buffer
  // cannot pass half full before the next decision (at the fill rate seen
  // since the last epoch).
  r.collectives_since_epoch += r.since_decision;
  const double per_collective = v[2] / static_cast<double>(r.decision_every);
  const double target = decision_spacing(s.cfg.epoch_seconds);
  double every = per_collective > 0 ? target / per_collective : 1e9;
  const double fill_per_collective = v[0] / static_cast<double>(std::max<std::uint64_t>(r.collectives_since_epoch, 1));
  if (fill_per_collective > 0) every = std::min(every, 0.5 * std::max(0.5 - v[0], 0.0) / fill_per_collective);
  r.decision_every = static_cast<std::uint64_t>(std::clamp(every, 1.0, 65536.0));
  r.since_decision = 0;
  r.last_decision_ns = now_ns;
  const bool due = std::isfinite(s.cfg.epoch_seconds) && v[1] >= s.cfg.epoch_seconds;
  const bool full = v[0] >= 0.5;
  if ((due || full) && v[3] == 0.0) run_epoch(false);
}

void run_epoch(bool final) {
  State* sp = state();
  if (sp == nullptr) return;
  State& s = *sp;
  const std::uint64_t t_start = raw_now();
  if (!final) record_enter(t_start, tool_region_epoch());
  ToolScope tool;
  const double wall0 = MPI_Wtime();

  s.clock.advance(ClockMapper::sample());
  s.clock_sync.sample(s.tool_world);
  // Drain every thread's buffer into its location window.
  auto& windows = s.windows;
  const int nbuf = s.buffers.count();
  if (windows.size() < static_cast<std::size_t>(nbuf)) windows.resize(static_cast<std::size_t>(nbuf));
  for (int i = 0; i < nbuf; ++i) {
    auto& w = windows[static_cast<std::size_t>(i)];
    w.location = i;
    w.events.clear();
    w.dropped = 0;
    if (ThreadBuffer* b = s.buffers.at(i)) {
      b->drain(w.events);
      for (auto& e : w.events) e.time = global_ns(s, e.time);
      w.dropped = b->take_dropped();
    }
  }
  if (nbuf > 0) windows[0].dropped += s.buffers.unregistered_drops() - s.totals.dropped_unregistered;
  s.totals.dropped_unregistered = s.buffers.unregistered_drops();
  windows.resize(static_cast<std::size_t>(nbuf));
  // After the drain: every region a drained event names was registered
  // before that event was recorded.
  publish_regions(s.defs.regions);
  s.mixed_comms = std::max(s.mixed_comms, s.comms.publish_mixed());
  if (s.cfg.verbose >= 3) dump_windows(s);
  analysis::Task<analysis::EpochFacts> replay = s.analyzer->run_epoch(windows, *s.transport);
  replay.start();
  while (!replay.done()) s.transport->scheduler().resume();
  const analysis::EpochFacts facts = replay.result();
  const double analysis_seconds = MPI_Wtime() - wall0;

  write_epoch_output(s, facts, analysis_seconds);
  s.comms.retire_freed();
  s.comms.epoch_done();
  s.last_epoch_ns = monotonic_ns();
  if (!final) {
    // Leave the epoch together, so that the analysis' own imbalance does not
    // show up as the application's waiting.
    PMPI_Barrier(s.tool_world);
    record_leave(raw_now());
  }
}

}  // namespace onlinews::rt
