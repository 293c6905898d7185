// Results: the HDF5 file (io/), per-epoch rows as each epoch finishes, and at
// MPI_Finalize the unified definitions, the /profile matrices and the summary.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "inline_analysis/metrics.hpp"
#include "postpass/postpass.hpp"
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

// Next free name: run.h5 -> run.1.h5, run.2.h5, ...
std::string free_name(const std::string& path) {
  if (!exists(path)) return path;
  const auto dot = path.rfind(".h5");
  const std::string stem = (dot != std::string::npos && dot + 3 == path.size()) ? path.substr(0, dot) : path;
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

}  // namespace

void open_output(State& s) {
  int ok = 0;
  if (s.rank == 0) {
    const std::string wanted =
        s.cfg.output.empty() ? "onlinews_" + s.exe + "_" + std::to_string(s.size) + ".h5" : s.cfg.output;
    std::string path = free_name(wanted);
    if (path != wanted && !path.empty()) {
      log_warning("'" + wanted + "' exists and is never overwritten; writing '" + path + "' instead");
    }
    std::string err = path.empty() ? "no free file name next to '" + wanted + "'" : "";
    if (!path.empty()) {
      s.h5 = std::make_unique<io::H5Output>();
      if (s.h5->create(path, metric_defs(), err)) {
        ok = 1;
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
      } else {
        s.h5.reset();
      }
    }
    if (!ok) {
      log_warning(err + ": results will not be written to a file (the summary still appears); set "
                  "ONLINEWS_OUTPUT to a writable path");
    }
    s.output_path = ok ? path : "";
  }
  PMPI_Bcast(&ok, 1, MPI_INT, 0, s.tool_world);
  s.output_ok = ok != 0;
  bcast_string(s.output_path, s.tool_world);
}

void write_epoch_output(State& s, const analysis::EpochFacts& facts, double analysis_seconds) {
  const analysis::Profile& prof = s.analyzer->profile();
  const int nloc = prof.locations();
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(nloc) * analysis::kMetricCount);
  for (int l = 0; l < nloc; ++l) {
    const auto v = exclusive(prof.epoch_values(l));
    mine.insert(mine.end(), v.begin(), v.end());
  }
  // Each rank's facts, gathered at rank 0 as doubles.
  enum Fact : std::size_t {
    kBegin, kEnd,  // s since start; -1 if no events
    kEvents, kDropped, kCrossEpoch, kUnmatched, kSkipped, kAnalysis, kLocations, kForward, kBackward,
    kUnreceivedProbes, kClockViolations, kClockCorrected, kF
  };
  const double rel = static_cast<double>(s.start_ns);
  double f[kF] = {};
  f[kBegin] = facts.events ? (static_cast<double>(facts.t_begin) - rel) * 1e-9 : -1.0;
  f[kEnd] = facts.events ? (static_cast<double>(facts.t_end) - rel) * 1e-9 : -1.0;
  f[kEvents] = static_cast<double>(facts.events);
  f[kDropped] = static_cast<double>(facts.dropped_events);
  f[kCrossEpoch] = static_cast<double>(facts.cross_epoch_messages);
  f[kUnmatched] = static_cast<double>(facts.unmatched_receives);
  f[kSkipped] = facts.comm_analysis_skipped ? 1.0 : 0.0;
  f[kAnalysis] = analysis_seconds;
  f[kLocations] = static_cast<double>(nloc);
  f[kForward] = facts.forward_seconds;
  f[kBackward] = facts.backward_seconds;
  f[kUnreceivedProbes] = static_cast<double>(facts.unreceived_probes);
  f[kClockViolations] = static_cast<double>(facts.clock_violations);
  f[kClockCorrected] = static_cast<double>(facts.clock_violations_corrected);
  std::vector<double> all_f(s.rank == 0 ? kF * static_cast<std::size_t>(s.size) : 0);
  PMPI_Gather(f, static_cast<int>(kF), MPI_DOUBLE, all_f.data(), static_cast<int>(kF), MPI_DOUBLE, 0, s.tool_world);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(s.size)), displs(static_cast<std::size_t>(s.size));
  PMPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, s.tool_world);
  std::vector<double> all;
  if (s.rank == 0) {
    int total = 0;
    for (int r = 0; r < s.size; ++r) {
      displs[static_cast<std::size_t>(r)] = total;
      total += counts[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
               s.tool_world);
  if (s.rank != 0) return;

  io::EpochRow row;
  row.index = facts.index;
  double tb = -1, te = -1;
  double forward = 0, backward = 0;
  bool skipped = false;
  for (int r = 0; r < s.size; ++r) {
    const double* x = &all_f[kF * static_cast<std::size_t>(r)];
    forward = std::max(forward, x[kForward]);
    backward = std::max(backward, x[kBackward]);
    s.totals.unreceived_probes += static_cast<std::uint64_t>(x[kUnreceivedProbes]);
    s.totals.clock_violations += static_cast<std::uint64_t>(x[kClockViolations]);
    s.totals.clock_violations_corrected += static_cast<std::uint64_t>(x[kClockCorrected]);
    if (x[kBegin] >= 0) tb = tb < 0 ? x[kBegin] : std::min(tb, x[kBegin]);
    te = std::max(te, x[kEnd]);
    row.events += static_cast<std::int64_t>(x[kEvents]);
    row.dropped_events += static_cast<std::int64_t>(x[kDropped]);
    row.cross_epoch_messages += static_cast<std::int64_t>(x[kCrossEpoch]);
    s.totals.unmatched += static_cast<std::uint64_t>(x[kUnmatched]);
    row.analysis_seconds = std::max(row.analysis_seconds, x[kAnalysis]);
    skipped = skipped || x[kSkipped] > 0;
  }
  row.t_begin = std::max(tb, 0.0);
  row.t_end = std::max(te, 0.0);
  // Columns: (rank, thread) in order of first appearance.
  std::vector<double> matrix(s.locations.size() * analysis::kMetricCount, 0.0);
  for (int r = 0; r < s.size; ++r) {
    const int n = static_cast<int>(all_f[kF * static_cast<std::size_t>(r) + kLocations]);
    for (int l = 0; l < n; ++l) {
      const std::uint64_t key = (static_cast<std::uint64_t>(r) << 32) | static_cast<std::uint32_t>(l);
      auto it = s.location_column.find(key);
      if (it == s.location_column.end()) {
        it = s.location_column.emplace(key, static_cast<int>(s.locations.size())).first;
        s.locations.push_back({r, l});
        matrix.resize(s.locations.size() * analysis::kMetricCount, 0.0);
      }
      const double* src = &all[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) +
                               static_cast<std::size_t>(l) * analysis::kMetricCount];
      std::copy(src, src + analysis::kMetricCount,
                matrix.begin() + static_cast<std::ptrdiff_t>(it->second) * analysis::kMetricCount);
    }
  }
  s.totals.epochs += 1;
  s.totals.analysis_seconds += row.analysis_seconds;
  s.totals.forward_seconds += forward;
  s.totals.backward_seconds += backward;
  s.totals.events += static_cast<std::uint64_t>(row.events);
  s.totals.dropped += static_cast<std::uint64_t>(row.dropped_events);
  s.totals.cross_epoch += static_cast<std::uint64_t>(row.cross_epoch_messages);
  s.totals.skipped += skipped ? 1 : 0;
  if (s.h5 && !s.h5->append_epoch(row, matrix, static_cast<int>(s.locations.size()))) {
    log_warning("writing epoch " + std::to_string(row.index) + " to '" + s.output_path + "' failed");
  }
  if (s.cfg.verbose >= 2) {
    std::fprintf(stderr,
                 "onlinews: epoch %lld: %.3f-%.3f s, %lld events, analysis %.4f s (forward %.4f, backward %.4f)%s\n",
                 static_cast<long long>(row.index), row.t_begin, row.t_end, static_cast<long long>(row.events),
                 row.analysis_seconds, forward, backward, skipped ? " (events were dropped: time only)" : "");
  }
}

}  // namespace onlinews::rt
