// Synchronizing cuts (DESIGN.md §4): taken inside collectives that span all
// ranks and synchronize them (Barrier, Allreduce, Allgather(v), Alltoall(v/w),
// Reduce_scatter(_block)), counted per communicator so that "the k-th such
// collective on C" names the same point on every rank.  Every N-th one, a
// small allreduce on a tool duplicate of C decides whether to cut; N adapts
// so that decisions cost little whatever the collective rate.  A cut only
// adds a boundary for the pipeline (pipeline.hpp): its window is analyzed
// later, in slices, while the application goes on.  Requested cuts, for
// programs without such collectives, are cut_protocol.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "cut_protocol.hpp"
#include "mpi_transport.hpp"
#include "regions.hpp"
#include "shared_guard.hpp"
#include "state.hpp"

namespace onlinews::rt {
namespace {

// Decide at most this often (seconds), and at least this often while the
// epoch target is finite.
double decision_spacing(double epoch_seconds) {
  if (!std::isfinite(epoch_seconds)) return 0.25;
  return std::clamp(epoch_seconds / 20.0, 0.005, 0.25);
}

// Fill of the fullest buffer, counting what the pipeline drained but has not
// cut into a window yet.
double max_fill(State& s) {
  double f = 0;
  for (int i = 0; i < s.buffers.count(); ++i) {
    if (ThreadBuffer* b = s.buffers.at(i)) f = std::max(f, b->fill());
  }
  if (ThreadBuffer* b = s.buffers.at(0)) {
    f = std::max(f, static_cast<double>(s.pipeline->open_events()) / static_cast<double>(b->capacity()));
  }
  return f;
}

}  // namespace

void on_eligible_collective(int comm_id, std::uint64_t t_enter, std::uint64_t t_leave) {
  State* sp = state();
  // Every thread takes part in the decision (another rank may call this
  // instance from its MPI thread, and all members must run the same
  // decisions), but only the MPI thread cuts: its window part is complete at
  // the boundary (Pipeline::take_window).  Another thread vetoes the cut and
  // reads no state of the MPI thread's (under MPI_THREAD_MULTIPLE it may run
  // concurrently): its other inputs are neutral, the maxima come from the
  // ranks on their MPI threads.
  if (sp == nullptr || !g_recording.load(std::memory_order_relaxed)) return;
  const bool mpi_thread = on_mpi_thread();
  State& s = *sp;
  CommRecord* rp = nullptr;
  {
    SharedGuard guard;  // (records never move: the reference outlives the guard)
    rp = &s.comms.rec(comm_id);
  }
  CommRecord& r = *rp;
  if (!r.spans_world || r.decide == MPI_COMM_NULL) return;
  const bool test_mode = s.cfg.epoch_seconds == 0.0;  // a cut at every eligible collective
  if (!test_mode && ++r.since_decision < r.decision_every) return;

  record_enter(raw_now(), tool_region_decide());
  const std::uint64_t now_ns = monotonic_ns();
  if (r.last_decision_ns == 0) r.last_decision_ns = now_ns;
  // [0] fill of the fullest buffer, [1] seconds since the last boundary,
  // [2] seconds the last `decision_every` collectives took, [3] 1 if a rank
  // cannot be cut now (it calls the collective from a thread other than the
  // MPI thread),
  // [4] requested boundaries announced, [5] windows waiting for analysis,
  // [6] epochs cut so far (the fill rate counts since the last: agreed,
  // since under MPI_THREAD_MULTIPLE a rank deciding on another thread may
  // or may not have seen its MPI thread's latest cut).
  double v[7] = {0, 0, 1e-9 * static_cast<double>(now_ns - r.last_decision_ns), 1.0, 0, 0, 0};
  if (mpi_thread) {
    v[0] = max_fill(s);
    v[1] = s.cuts->since_boundary();
    v[3] = 0.0;
    v[4] = static_cast<double>(s.cuts->requested_known());
    v[5] = static_cast<double>(s.pipeline->backlog());
    v[6] = static_cast<double>(s.comms.epochs());
  }
  {
    ToolScope tool;
    PMPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_MAX, r.decide);
  }
  // Identical inputs on every rank, so every rank computes the same N: often
  // enough for the time target, and often enough that the fullest buffer
  // cannot pass kCutFill before the next decision (at the fill rate seen
  // since the last epoch): a synchronizing cut, exact, comes before the
  // requested one the same fill would ask for.
  if (r.epochs_seen != static_cast<std::uint64_t>(v[6])) {
    r.epochs_seen = static_cast<std::uint64_t>(v[6]);
    r.collectives_since_epoch = 0;
  }
  r.collectives_since_epoch += r.since_decision;
  const double per_collective = v[2] / static_cast<double>(std::max<std::uint64_t>(r.decision_every, 1));
  const double target = decision_spacing(s.cfg.epoch_seconds);
  double every = per_collective > 0 ? target / per_collective : 1e9;
  const double fill_per_collective = v[0] / static_cast<double>(std::max<std::uint64_t>(r.collectives_since_epoch, 1));
  if (fill_per_collective > 0) every = std::min(every, 0.5 * std::max(kCutFill - v[0], 0.0) / fill_per_collective);
  r.decision_every = static_cast<std::uint64_t>(std::clamp(every, 1.0, 65536.0));
  r.since_decision = 0;
  r.last_decision_ns = now_ns;
  const bool due = std::isfinite(s.cfg.epoch_seconds) && v[1] >= s.cfg.epoch_seconds;
  const bool full = v[0] >= kCutFill;
  // Cutting while windows still wait for analysis frees no memory.
  const bool cut = v[3] == 0.0 && (test_mode || ((due || full) && v[5] <= 1.0));
  if (cut) {
    ToolScope tool;
    s.cuts->catch_up(static_cast<std::uint32_t>(v[4]), t_enter);
    s.clock_sync.sample(s.tool_world);  // offsets between hosts, once per synchronizing cut
    s.comms.epoch_done();
  }
  record_leave(raw_now());
  // The window ends right after the cut collective's Leave: the decision is
  // tool time of the next window.
  if (cut) s.cuts->sync_cut(cutkind::kSync, t_leave);
}

void final_epoch(std::uint64_t t_enter, std::uint64_t t_leave) {
  State& s = *state();
  ToolScope tool;
  // MPI_Finalize spans all ranks like a synchronizing collective.
  double v = static_cast<double>(s.cuts->requested_known());
  PMPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, s.tool_world);
  s.cuts->catch_up(static_cast<std::uint32_t>(v), t_enter);
  s.clock_sync.sample(s.tool_world);
  s.cuts->sync_cut(cutkind::kSync | cutkind::kFinal, t_leave);
  s.cuts->shutdown();
  // Every rank is here: drive the remaining epochs to their end.
  // (This thread computes too; while the analysis thread holds the
  // pipeline it leaves the core to it.)
  //
  // The safety net: an analysis that waits in a cycle -- only a bug can
  // make one, but it would hang the job -- is given up.  The ranks agree in
  // rounds of a small allreduce on WORLD's decision communicator (no cut
  // decision uses it any more) whether all are done, or whether every rank
  // that is not has waited for the others, with nothing completing, for
  // ONLINEWS_FINALIZE_TIMEOUT.  Every rank sees the same round, so all give
  // up together; a slow rank that still computes or receives keeps the
  // others waiting, as before.
  const MPI_Comm decide = s.comms.rec(s.comms.lookup(MPI_COMM_WORLD)).decide;
  using clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration<double>(s.cfg.finalize_timeout);
  auto quiet_since = clock::now();
  std::uint64_t seen = s.transport->progress();
  int mine[2] = {0, 0}, all[2] = {0, 0};  // {done, done or stalled}, minimum over ranks
  MPI_Request round = MPI_REQUEST_NULL;
  for (;;) {
    Pipeline::Wait w = Pipeline::Wait::Done;
    if (!s.pipeline->finished()) w = s.pipeline->advance(std::chrono::nanoseconds(0), true);
    // Waiting for the analysis thread or for other ranks: the core goes to
    // whoever is due (on an oversubscribed node the rank this one waits
    // for may share its core; spinning here made the final epoch of an
    // 8-rank sweep on 2 cores take ~3x its compute).
    if (w == Pipeline::Wait::Helper || w == Pipeline::Wait::Remote) std::this_thread::yield();
    const auto now = clock::now();
    if (w != Pipeline::Wait::Remote || s.transport->progress() != seen) {
      seen = s.transport->progress();
      quiet_since = now;
    }
    if (round == MPI_REQUEST_NULL) {
      mine[0] = s.pipeline->finished() ? 1 : 0;
      mine[1] = mine[0] == 1 || now - quiet_since > timeout ? 1 : 0;
      PMPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MIN, decide, &round);
    }
    int done = 0;
    PMPI_Test(&round, &done, MPI_STATUS_IGNORE);
    if (!done) continue;
    if (all[0] == 1) break;
    if (all[1] == 1) {
      s.pipeline->abandon();
      // The analysis' operations stay pending on the tool's WORLD duplicate:
      // the output's collectives get a clean one (every rank is here).
      MPI_Comm fresh = MPI_COMM_NULL;
      if (PMPI_Comm_dup(decide, &fresh) == MPI_SUCCESS) s.tool_world = fresh;
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "the analysis made no progress on any rank for %.0f s at MPI_Finalize (a bug in onlinews: "
                    "please report it); the epochs not analyzed yet are given up, the file keeps those finished "
                    "before (ONLINEWS_FINALIZE_TIMEOUT)",
                    s.cfg.finalize_timeout);
      log_warning(msg);
      break;
    }
  }
}

}  // namespace onlinews::rt
