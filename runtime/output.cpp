// Results: the HDF5 file (io/), per-epoch rows as each epoch finishes, and at
// MPI_Finalize the unified definitions, the /profile matrices and the summary.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "inline_analysis/metrics.hpp"
#include "mpi_transport.hpp"
#include "progress.hpp"
#include "postpass/postpass.hpp"
#include "output_grid.hpp"
#include "state.hpp"

namespace onlinews::rt {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::vector<io::MetricDef> metric_defs() {
  std::vector<io::MetricDef> v;
  for (int m = 0; m < analysis::kMetricCount; ++m) {
    const auto& i = analysis::metric_info(m);
    v.push_back({i.name, i.display, i.unit, i.description, i.parent});
  }
  return v;
}

// run.h5 -> run (other names as they are).
std::string h5_stem(const std::string& path) {
  const auto dot = path.rfind(".h5");
  return dot != std::string::npos && dot + 3 == path.size() ? path.substr(0, dot) : path;
}

// Next free name: run.h5 -> run.1.h5, run.2.h5, ...
std::string free_name(const std::string& path) {
  if (!exists(path)) return path;
  const std::string stem = h5_stem(path);
  for (int i = 1; i < 10000; ++i) {
    const std::string p = stem + "." + std::to_string(i) + ".h5";
    if (!exists(p)) return p;
  }
  return "";
}

void bcast_string(std::string& s, MPI_Comm comm) {
  int n = static_cast<int>(s.size());
  PMPI_Bcast(&n, 1, MPI_INT, 0, comm);
  s.resize(static_cast<std::size_t>(n));
  PMPI_Bcast(s.data(), n, MPI_CHAR, 0, comm);
}

// Exclusive values (in the metric tree) of one location's epoch totals.
std::vector<double> exclusive(const std::vector<double>& incl) {
  std::vector<double> v = incl;
  analysis::to_exclusive(v.data(), 1);
  return v;
}

// The live log's totals of an epoch (inclusive, summed over locations; the
// matrix holds exclusive values per location): where the time went, and
// every wait state that occurred.
std::vector<std::pair<std::string, double>> live_totals(const std::vector<double>& matrix) {
  using analysis::kMetricCount;
  std::vector<double> incl(kMetricCount, 0.0);
  for (std::size_t i = 0; i < matrix.size(); ++i) incl[i % kMetricCount] += matrix[i];
  analysis::to_inclusive(incl.data());
  std::vector<std::pair<std::string, double>> out;
  auto add = [&](analysis::Metric m, bool always) {
    const double v = incl[static_cast<std::size_t>(analysis::idx(m))];
    if (always || v != 0) out.emplace_back(analysis::metric_info(m).name, v);
  };
  for (auto m : {analysis::Metric::time, analysis::Metric::comp, analysis::Metric::mpi, analysis::Metric::omp_time,
                 analysis::Metric::onlinews_overhead, analysis::Metric::delay, analysis::Metric::critical_path}) {
    add(m, true);
  }
  for (auto m : postpass::kWaitStates) add(m, false);
  for (auto m : postpass::kOmpWaits) add(m, false);
  return out;
}

}  // namespace

void open_output(State& s) {
  int ok = 0;
  if (s.rank == 0) {
    std::string wanted =
        s.cfg.output.empty() ? "onlinews_" + s.exe + "_" + std::to_string(s.size) + ".h5" : s.cfg.output;
    // Processes started by MPI_Comm_spawn are a job of their own, analyzed
    // on their own: their file is named apart from the parent job's (which
    // keeps the name asked for, whichever job opens its file first).
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
      wanted = h5_stem(wanted) + ".spawned.h5";
      log_warning("this job was started by MPI_Comm_spawn: it is analyzed on its own (its calls on the parent "
                  "inter-communicator as time only), results in '" + wanted + "' or the next free name");
    }
    std::string path = free_name(wanted);
    if (path != wanted && !path.empty()) {
      log_warning("'" + wanted + "' exists and is never overwritten; writing '" + path + "' instead");
    }
    std::string err = path.empty() ? "no free file name next to '" + wanted + "'" : "";
    bool module_loaded = true;  // (false: libonlinews_io.so, not the path, is the problem)
    if (!path.empty()) {
      s.h5 = io::new_h5output(err);
      module_loaded = s.h5 != nullptr;
      if (s.h5 != nullptr && s.h5->create(path, metric_defs(), s.size, err)) {
        s.h5->set_attr("tool_version", std::string("0.1.0"));
        s.h5->set_attr("command", s.command);
        s.h5->set_attr("ranks", static_cast<std::int64_t>(s.size));
        s.h5->set_attr("max_threads", static_cast<std::int64_t>(1));
        s.h5->set_attr("epochs", static_cast<std::int64_t>(0));
        s.h5->set_attr("wall_seconds", 0.0);
        s.h5->set_attr("dropped_events", static_cast<std::int64_t>(0));
        s.h5->set_attr("clock", std::string(s.clock_name));
        s.h5->set_attr("mpi_library", s.mpi_library);
        s.h5->set_attr("start_time", s.start_time);
        s.h5->set_attr("epoch_seconds", s.cfg.epoch_seconds);
        s.h5->set_attr("complete", static_cast<std::int64_t>(0));  // 1 once MPI_Finalize wrote everything
        // The file appears under its name with these attributes: a job
        // killed before its first epoch ends leaves a file marked
        // incomplete (mpi.kill_trials under ASan: a kill 0.4 s after the
        // file appeared found no `complete` attribute), and one killed
        // before this no file.
        ok = s.h5->publish(err) ? 1 : 0;
        std::string live_err;
        if (ok && !s.live.open(path, s.command, s.size, metric_defs(), postpass::wait_state_names(), live_err)) {
          log_warning(live_err + " (onlinews-report --follow needs it)");
        }
      }
      if (!ok) s.h5.reset();
    }
    if (!ok) {
      log_warning(err + ": results will not be written to a file (the summary still appears)" +
                  (module_loaded ? "; set ONLINEWS_OUTPUT to a writable path" : ""));
    }
    s.output_path = ok ? path : "";
  }
  PMPI_Bcast(&ok, 1, MPI_INT, 0, s.tool_world);
  s.output_ok = ok != 0;
  bcast_string(s.output_path, s.tool_world);
}

analysis::Task<> write_epoch_output(State& s, const analysis::EpochFacts& facts, double analysis_seconds,
                                    std::uint8_t cut_kind) {
  const analysis::Profile& prof = s.analyzer->profile();
  const int nloc = prof.locations();
  // Each rank's facts as doubles, then its locations' exclusive values: one
  // gather at rank 0.
  enum Fact : std::size_t {
    kBegin, kEnd,  // s since start; -1 if no events
    kEvents, kDropped, kCrossEpoch, kUnmatched, kSkipped, kAnalysis, kLocations, kForward, kBackward,
    // then the counted facts (run_facts.def), in their order
#define ONLINEWS_FACT(name, type, what) kFact_##name,
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
    kF
  };
  constexpr std::size_t kFacts = kBackward + 1;
  const double rel = static_cast<double>(s.start_ns);
  std::vector<double> mine(kF, 0.0);
  mine[kBegin] = facts.events ? (static_cast<double>(facts.t_begin) - rel) * 1e-9 : -1.0;
  mine[kEnd] = facts.events ? (static_cast<double>(facts.t_end) - rel) * 1e-9 : -1.0;
  mine[kEvents] = static_cast<double>(facts.events);
  mine[kDropped] = static_cast<double>(facts.dropped_events);
  mine[kCrossEpoch] = static_cast<double>(facts.cross_epoch_messages);
  mine[kUnmatched] = static_cast<double>(facts.unmatched_receives);
  mine[kSkipped] = facts.comm_analysis_skipped ? 1.0 : 0.0;
  mine[kAnalysis] = analysis_seconds;
  mine[kLocations] = static_cast<double>(nloc);
  mine[kForward] = facts.forward_seconds;
  mine[kBackward] = facts.backward_seconds;
  {
    std::size_t k = kFacts;
#define ONLINEWS_FACT(name, type, what) mine[k++] = static_cast<double>(facts.name);
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
  }
  // RMA synchronization calls MPI rejected (hooks_rma.cpp) count with the
  // ones the analysis found out of order.
  mine[kFact_rma_sync_errors] += static_cast<double>(s.rma_rejected);
  s.rma_rejected = 0;
  for (int l = 0; l < nloc; ++l) {
    const auto v = exclusive(prof.epoch_values(l));
    mine.insert(mine.end(), v.begin(), v.end());
  }
  // MPI_T performance variables at the cut that ended the epoch (boundary
  // index + 1; Pipeline::add_boundary), after the locations.
  std::vector<double> pv;
  if (auto it = s.pvar_samples.find(static_cast<std::uint32_t>(facts.index) + 1); it != s.pvar_samples.end()) {
    pv = std::move(it->second);
    s.pvar_samples.erase(s.pvar_samples.begin(), std::next(it));
  } else {
    pv = s.pvars.sample();
  }
  mine.insert(mine.end(), pv.begin(), pv.end());
  std::vector<std::byte> bytes(mine.size() * sizeof(double));
  std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<std::vector<std::byte>> all;
  co_await s.transport->gather(bytes, all);
  if (s.rank != 0) co_return;

  io::EpochRow row;
  row.index = facts.index;
  row.cut = cut_kind;
  double tb = -1, te = -1;
  double forward = 0, backward = 0;
  bool skipped = false;
  std::vector<std::vector<double>> per_rank(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    per_rank[r].resize(all[r].size() / sizeof(double));
    std::memcpy(per_rank[r].data(), all[r].data(), per_rank[r].size() * sizeof(double));
    const double* x = per_rank[r].data();
    if (per_rank[r].size() < kF) continue;
    forward = std::max(forward, x[kForward]);
    backward = std::max(backward, x[kBackward]);
    {
      std::size_t k = kFacts;
#define ONLINEWS_FACT(name, type, what) s.totals.name += static_cast<type>(x[k++]);
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
    }
    if (x[kBegin] >= 0) tb = tb < 0 ? x[kBegin] : std::min(tb, x[kBegin]);
    te = std::max(te, x[kEnd]);
    row.events += static_cast<std::int64_t>(x[kEvents]);
    row.dropped_events += static_cast<std::int64_t>(x[kDropped]);
    row.cross_epoch_messages += static_cast<std::int64_t>(x[kCrossEpoch]);
    row.truncated_intervals += static_cast<std::int64_t>(x[kFact_truncated_intervals]);  // (also a total)
    s.totals.unmatched += static_cast<std::uint64_t>(x[kUnmatched]);
    row.analysis_seconds = std::max(row.analysis_seconds, x[kAnalysis]);
    skipped = skipped || x[kSkipped] > 0;
  }
  row.t_begin = std::max(tb, 0.0);
  row.t_end = std::max(te, 0.0);
  // Columns: (rank, thread) in order of first appearance.
  std::vector<double> matrix(s.locations.size() * analysis::kMetricCount, 0.0);
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r].size() < kF) continue;
    const int n = static_cast<int>(per_rank[r][kLocations]);
    for (int l = 0; l < n; ++l) {
      const std::uint64_t key = (static_cast<std::uint64_t>(r) << 32) | static_cast<std::uint32_t>(l);
      auto it = s.location_column.find(key);
      if (it == s.location_column.end()) {
        it = s.location_column.emplace(key, static_cast<int>(s.locations.size())).first;
        s.locations.push_back({static_cast<int>(r), l});
        matrix.resize(s.locations.size() * analysis::kMetricCount, 0.0);
      }
      const double* src = &per_rank[r][kF + static_cast<std::size_t>(l) * analysis::kMetricCount];
      std::copy(src, src + analysis::kMetricCount,
                matrix.begin() + static_cast<std::ptrdiff_t>(it->second) * analysis::kMetricCount);
    }
  }
  // The sampled MPI_T variables, per rank: pvars[variable * ranks + rank].
  const std::size_t npv = s.pvars.names().size();
  std::vector<double> pvars(npv * static_cast<std::size_t>(s.size), 0.0);
  for (std::size_t r = 0; r < per_rank.size() && npv > 0; ++r) {
    if (per_rank[r].size() < kF) continue;
    const std::size_t at = kF + static_cast<std::size_t>(per_rank[r][kLocations]) * analysis::kMetricCount;
    for (std::size_t v = 0; v < npv && at + v < per_rank[r].size(); ++v) pvars[v * s.size + r] = per_rank[r][at + v];
  }
  s.totals.epochs += 1;
  s.totals.analysis_seconds += row.analysis_seconds;
  s.totals.forward_seconds += forward;
  s.totals.backward_seconds += backward;
  s.totals.events += static_cast<std::uint64_t>(row.events);
  s.totals.dropped += static_cast<std::uint64_t>(row.dropped_events);
  s.totals.cross_epoch += static_cast<std::uint64_t>(row.cross_epoch_messages);
  s.totals.skipped += skipped ? 1 : 0;
  ((cut_kind & cutkind::kRequested) != 0 ? s.totals.requested_cuts : s.totals.sync_cuts) += 1;
  // HDF5 is not reentrant: never append from inside the library's own MPI
  // calls (the application may be writing its own HDF5 file).  The append
  // runs in parts of a few datasets, each a short slice of its own: it may
  // run inside the application's waits (patient.hpp), where a long write
  // would hold back a message that has arrived.
  analysis::Scheduler& sched = s.transport->scheduler();
  auto hdf5_free = [&]() -> analysis::Task<> {
    co_await sched.slice();
    while (progress_inside_hdf5()) co_await sched.next_tick();
  };
  double write_seconds = 0;
  auto timed = [&](auto&& part) {
    const std::uint64_t w0 = monotonic_ns();
    const bool r = part();
    write_seconds += 1e-9 * static_cast<double>(monotonic_ns() - w0);
    return r;
  };
  if (s.h5 && !s.h5->failed()) {
    const int nloc_all = static_cast<int>(s.locations.size());
    constexpr std::size_t kPart = 2;  // datasets per part (~0.15 ms each, flushed)
    co_await hdf5_free();
    s.appending = true;  // until the end: the application must not run between the parts (Pipeline::finish_append)
    bool ok = timed([&] { return s.h5->append_epoch_begin(row, nloc_all); });
    for (std::size_t m = 0; m < s.h5->metric_count(); m += kPart) {
      co_await hdf5_free();
      ok = timed([&] { return s.h5->append_epoch_part(matrix, nloc_all, m, kPart); }) && ok;
    }
    co_await hdf5_free();
    const std::vector<double> views = epoch_views(s, matrix);
    ok = timed([&] { return s.h5->append_views(views, view_count(), s.size); }) && ok;
    if (npv > 0) ok = timed([&] { return s.h5->append_pvars(pvars, s.pvars.names(), s.size); }) && ok;
    co_await hdf5_free();
    ok = timed([&] { return s.h5->append_epoch_end(); }) && ok;
    s.appending = false;
    if (!ok) {
      log_warning("writing epoch " + std::to_string(row.index) + " to '" + s.output_path + "' failed" +
                  (s.h5->failed() ? " (is the disk full, or a quota exceeded?): no more epochs, no profile are "
                                    "written to it; it keeps the epochs before"
                                  : ""));
    }
  }
  s.live.epoch(row, live_totals(matrix));
  if (s.cfg.verbose >= 2) {
    std::fprintf(stderr,
                 "onlinews: epoch %lld (%s cut): %.3f-%.3f s, %lld events, analysis %.4f s (forward %.4f, backward "
                 "%.4f), written in %.4f s%s\n",
                 static_cast<long long>(row.index), (cut_kind & cutkind::kRequested) != 0 ? "requested" : "synchronizing",
                 row.t_begin, row.t_end, static_cast<long long>(row.events), row.analysis_seconds, forward, backward,
                 write_seconds, skipped ? " (events were dropped: time only)" : "");
  }
}

}  // namespace onlinews::rt
