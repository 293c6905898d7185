// The one-screen summary on rank 0's stderr at MPI_Finalize.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <sstream>

#include "postpass.hpp"

namespace onlinews::postpass {
namespace {

using analysis::Metric;
using analysis::kMetricCount;

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// One formatted line of the summary.
__attribute__((format(printf, 2, 3))) void say(std::ostream& os, const char* fmt, ...) {
  char line[512];
  std::va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  os << line;
}

}  // namespace

void print_summary(const SummaryInput& in, const std::vector<double>& incl, std::int64_t n_callpaths,
                   const Unified& unified, MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const std::size_t n = static_cast<std::size_t>(n_callpaths) * kMetricCount;
  std::vector<double> total(rank == 0 ? n : 0);
  PMPI_Reduce(incl.data(), total.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, 0, comm);
  // Per metric: this rank's total, and which rank has the most.
  struct ValRank {
    double v;
    int r;
  };
  std::vector<ValRank> mine(kMetricCount), worst(kMetricCount);
  for (int m = 0; m < kMetricCount; ++m) {
    double v = 0;
    for (std::int64_t cp = 0; cp < n_callpaths; ++cp) v += incl[static_cast<std::size_t>(cp) * kMetricCount + m];
    mine[static_cast<std::size_t>(m)] = {v, rank};
  }
  PMPI_Reduce(mine.data(), worst.data(), kMetricCount, MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
  if (rank != 0) return;

  auto metric_total = [&](Metric m) {
    double v = 0;
    for (std::int64_t cp = 0; cp < n_callpaths; ++cp) v += total[static_cast<std::size_t>(cp) * kMetricCount + idx(m)];
    return v;
  };
  auto top_callpath = [&](Metric m) {
    std::int64_t best = -1;
    double bv = 0;
    for (std::int64_t cp = 0; cp < n_callpaths; ++cp) {
      const double v = total[static_cast<std::size_t>(cp) * kMetricCount + idx(m)];
      if (v > bv) {
        bv = v;
        best = cp;
      }
    }
    return best < 0 ? std::string("-") : callpath_name(unified, best);
  };

  const double time = metric_total(Metric::time);
  std::ostringstream os;
  os << "onlinews: ----------------------------------------------------------------------------\n";
  say(os, "onlinews: %d rank%s x %d thread%s, %.2f s wall time, %d epoch%s (%llu synchronizing and %llu "
      "requested cut%s; analysis %.3f s)\n",
      in.ranks, in.ranks == 1 ? "" : "s", in.max_threads, in.max_threads == 1 ? "" : "s", in.wall_seconds,
      in.epochs, in.epochs == 1 ? "" : "s", static_cast<unsigned long long>(in.sync_cuts),
      static_cast<unsigned long long>(in.requested_cuts), in.requested_cuts == 1 ? "" : "s",
      in.analysis_seconds);
  if (in.analysis_thread_ranks > 0) {
    say(os, "onlinews: analysis threads on %d of %d ranks ran %.3f s of the analysis\n",
        in.analysis_thread_ranks, in.ranks, in.analysis_thread_seconds);
  }
  // onlinews' own time: one-time set-up (MPI_T, communicator duplicates,
  // output file) versus the recurring epochs and cut decisions.
  double setup = 0;
  for (std::int64_t cp = 0; cp < n_callpaths; ++cp) {
    const auto& c = unified.callpaths[static_cast<std::size_t>(cp)];
    if (unified.regions[static_cast<std::size_t>(c.region)].name == "onlinews_setup") {
      setup += total[static_cast<std::size_t>(cp) * kMetricCount + idx(Metric::onlinews_overhead)];
    }
  }
  const double overhead = metric_total(Metric::onlinews_overhead);
  say(os, "onlinews: time: computation %.1f %%, MPI %.1f %%, onlinews %.2f %% (set-up %.2f %%, epochs and "
      "cut decisions %.2f %%)\n",
      pct(metric_total(Metric::comp), time), pct(metric_total(Metric::mpi), time), pct(overhead, time),
      pct(setup, time), pct(overhead - setup, time));

  if (in.sampling_hz > 0) {
    // (Sampled regions are leaves: their inclusive time is their own.)
    double named = 0;
    for (std::int64_t cp = 0; cp < n_callpaths; ++cp) {
      const auto& c = unified.callpaths[static_cast<std::size_t>(cp)];
      if (unified.regions[static_cast<std::size_t>(c.region)].kind == "sampled") {
        named += total[static_cast<std::size_t>(cp) * kMetricCount + idx(Metric::comp)];
      }
    }
    say(os, "onlinews: sampling at %d Hz: %llu samples in computation name %.1f %% of it by function (%llu "
        "samples in MPI or waits left out, %llu lost)\n",
        in.sampling_hz, static_cast<unsigned long long>(in.samples_placed), pct(named, metric_total(Metric::comp)),
        static_cast<unsigned long long>(in.samples_outside), static_cast<unsigned long long>(in.samples_lost));
  }

  std::vector<std::pair<double, Metric>> rows;
  auto add_row = [&](Metric m) {
    // Below a millisecond and a thousandth of the run, a row is noise.
    const double v = metric_total(m);
    if (v >= 1e-3 || (v > 0 && v >= 1e-3 * time)) rows.emplace_back(v, m);
  };
  for (Metric m : kWaitStates) add_row(m);
  add_row(Metric::mpi_latesender_wo);
  for (Metric m : kOmpWaits) add_row(m);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (rows.size() > static_cast<std::size_t>(in.rows)) rows.resize(static_cast<std::size_t>(in.rows));
  // Wrong Order goes right below Late Sender.
  auto wo = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.second == Metric::mpi_latesender_wo; });
  auto ls = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.second == Metric::mpi_latesender; });
  if (wo != rows.end() && ls != rows.end()) {
    const auto item = *wo;
    rows.erase(wo);
    ls = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.second == Metric::mpi_latesender; });
    rows.insert(ls + 1, item);
  }
  if (rows.empty()) {
    os << "onlinews: no wait states found\n";
  } else {
    say(os, "onlinews: %-26s %10s %8s   %-20s %s\n", "wait state", "total [s]", "share",
        "most on", "top call path");
    for (const auto& [v, m] : rows) {
      const ValRank& w = worst[static_cast<std::size_t>(idx(m))];
      char most[64];
      std::snprintf(most, sizeof most, "rank %d (%.3f s)", w.r, w.v);
      // Wrong Order is part of Late Sender: say so, so that the shares are
      // not read as adding up.
      const std::string label =
          m == Metric::mpi_latesender_wo ? "  of which Wrong Order" : analysis::metric_info(m).display;
      say(os, "onlinews: %-26s %10.3f %7.1f %%   %-20s %s\n", label.c_str(), v,
          pct(v, time), most, top_callpath(m).c_str());
    }
  }
  // Root causes: where the delays that caused the waiting are.
  const double delay_total = metric_total(Metric::delay);
  if (delay_total >= 1e-3) {
    std::vector<std::pair<double, std::int64_t>> causes;
    for (std::int64_t cp = 0; cp < n_callpaths; ++cp) {
      const double v = total[static_cast<std::size_t>(cp) * kMetricCount + idx(Metric::delay)];
      if (v > 0) causes.emplace_back(v, cp);
    }
    std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    say(os, "onlinews: delays causing it (delay costs, %.3f s in all; most on rank %d):\n",
        delay_total, worst[static_cast<std::size_t>(idx(Metric::delay))].r);
    for (std::size_t i = 0; i < causes.size() && i < 3; ++i) {
      say(os, "onlinews:   %10.3f s  %s\n", causes[i].first,
          callpath_name(unified, causes[i].second).c_str());
    }
  }
  if (in.untraced_waits > 0) {
    say(os, "onlinews: %.3f s of waiting in %llu point-to-point waits shorter than %.3g us not traced to causes "
        "(ONLINEWS_MIN_TRACED_WAIT)\n",
        in.untraced_wait_seconds, static_cast<unsigned long long>(in.untraced_waits), in.min_traced_wait * 1e6);
  }
  const double path = metric_total(Metric::critical_path);
  if (path > 0) {
    const double imbalance = metric_total(Metric::critical_path_imbalance);
    say(os, "onlinews: critical path %.3f s, of which %.3f s load imbalance; most imbalanced: %s\n", path,
        imbalance, imbalance > 0 ? top_callpath(Metric::critical_path_imbalance).c_str() : "-");
  }
  if (in.dropped_events > 0 || in.skipped_epochs > 0) {
    say(os, "onlinews: WARNING %llu events were dropped (full buffers): %d epoch%s analyzed for time only; "
        "raise ONLINEWS_BUFFER\n",
        static_cast<unsigned long long>(in.dropped_events), in.skipped_epochs,
        in.skipped_epochs == 1 ? "" : "s");
  }
  if (in.other_thread_calls > 0) {
    say(os, "onlinews: %llu collective, RMA or communicator calls of threads other than the one that initialized "
        "MPI (MPI_THREAD_MULTIPLE) were recorded as time only; the collectives (or RMA calls) on the %llu "
        "communicator%s they used were not analyzed\n",
        static_cast<unsigned long long>(in.other_thread_calls),
        static_cast<unsigned long long>(in.mixed_communicators), in.mixed_communicators == 1 ? "" : "s");
  }
  if (in.omp_nested_teams > 0) {
    say(os, "onlinews: %llu nested OpenMP parallel region%s: %s threads' time is recorded, but nested teams are "
        "not analyzed (idle threads, barrier delay costs and the critical path see outermost teams only)\n",
        static_cast<unsigned long long>(in.omp_nested_teams), in.omp_nested_teams == 1 ? "" : "s",
        in.omp_nested_teams == 1 ? "its" : "their");
  }
  if (in.untracked_calls > 0) {
    say(os, "onlinews: %llu MPI calls on communicators onlinews does not track (intercommunicators, or made by calls it "
        "does not see, such as Fortran's MPI_Comm_idup) were "
        "recorded as time only\n",
        static_cast<unsigned long long>(in.untracked_calls));
  }
  if (in.unmatched_receives > 0) {
    say(os, "onlinews: %llu receives without a matching send\n",
        static_cast<unsigned long long>(in.unmatched_receives));
  }
  if (in.split_collectives > 0) {
    say(os, "onlinews: %llu collective instance%s fell across a requested cut (one member's Leave before "
        "it, another's after) and %s not analyzed\n",
        static_cast<unsigned long long>(in.split_collectives), in.split_collectives == 1 ? "" : "s",
        in.split_collectives == 1 ? "was" : "were");
  }
  if (in.rma_sync_errors > 0) {
    say(os, "onlinews: WARNING %llu erroneous RMA synchronization call%s (rejected by MPI, or out of order: a "
        "complete without a start, a wait without a post) left out of the RMA analysis\n",
        static_cast<unsigned long long>(in.rma_sync_errors), in.rma_sync_errors == 1 ? "" : "s");
  }
  if (in.unexplained_rma_waits > 0) {
    say(os, "onlinews: %llu RMA wait%s (Late Post, Early Wait, lock competition) could not be paired with the "
        "call that caused %s (in another epoch's window, mostly): found, but not traced (%.3f s of waiting "
        "without delay costs; critical path)\n",
        static_cast<unsigned long long>(in.unexplained_rma_waits), in.unexplained_rma_waits == 1 ? "" : "s",
        in.unexplained_rma_waits == 1 ? "it" : "them", in.unexplained_rma_wait_seconds);
  }
  if (in.threaded_mpi_windows > 0) {
    say(os, "onlinews: MPI calls came from several threads of a rank in %llu window%s: analyzed as one stream "
        "per rank in time order, each call on its own thread\n",
        static_cast<unsigned long long>(in.threaded_mpi_windows), in.threaded_mpi_windows == 1 ? "" : "s");
  }
  if (in.concurrent_mpi_windows > 0) {
    say(os, "onlinews: in %llu of them, MPI calls of different threads overlapped in time (MPI_THREAD_MULTIPLE): "
        "messages matched per envelope in posting order, delay costs per thread\n",
        static_cast<unsigned long long>(in.concurrent_mpi_windows));
  }
  if (in.ambiguous_messages > 0) {
    say(os, "onlinews: %llu message%s could have been matched in another order (sends or receives of several "
        "threads on one envelope overlapped in time): matched, but not analyzed\n",
        static_cast<unsigned long long>(in.ambiguous_messages), in.ambiguous_messages == 1 ? "" : "s");
  }
  if (in.guessed_critical_paths > 0) {
    say(os, "onlinews: the critical path's end in %llu window%s was guessed (its holder was lost at a cut; "
        "docs/design.md): the path there is approximate\n",
        static_cast<unsigned long long>(in.guessed_critical_paths), in.guessed_critical_paths == 1 ? "" : "s");
  }
  if (in.unreceived_probes > 0) {
    say(os, "onlinews: %llu probes saw a message that could not be told (an open wildcard receive might take it "
        "first, or its send was lost): not analyzed\n",
        static_cast<unsigned long long>(in.unreceived_probes));
  }
  if (in.clock_domains > 1 || in.clock_violations > 0) {
    say(os, "onlinews: clocks: %d domains, offsets up to %.6f s (measured to within %.3f ms) corrected; %llu "
        "receives/probes before their send found, %llu corrected\n",
        in.clock_domains, in.clock_offset_max_seconds, 1e3 * in.clock_offset_error_seconds,
        static_cast<unsigned long long>(in.clock_violations),
        static_cast<unsigned long long>(in.clock_violations_corrected));
  }
  if (in.unattributed_longterm_seconds > 1e-6) {
    say(os, "onlinews: %.3f s of long-term delay costs would flow back further than the window before a "
        "requested cut: not charged (delay costs up to that much low)\n", in.unattributed_longterm_seconds);
  }
  if (in.approximate_path_seconds > 1e-3) {
    say(os, "onlinews: up to %.3f s of the critical path lie on senders between a send and a requested cut, "
        "standing for the receivers that waited for it across the cut (approximate there)\n",
        in.approximate_path_seconds);
  }
  if (in.truncated_intervals > 0) {
    say(os, "onlinews: %llu delay-cost interval%s reaching back across a window analyzed for time only "
        "were cut short at the next window (delay costs slightly low there)\n",
        static_cast<unsigned long long>(in.truncated_intervals), in.truncated_intervals == 1 ? "" : "s");
  }
  if (in.cross_epoch_messages > 0) {
    say(os, "onlinews: %llu messages crossed an epoch cut (analyzed in the later epoch)\n",
        static_cast<unsigned long long>(in.cross_epoch_messages));
  }
  if (in.crossing_sync_sends > 0) {
    say(os, "onlinews: %llu synchronizing messages (large or synchronous-mode) crossed a cut where their sender's "
        "Late Receiver wait, if any, could not be analyzed in full (known limitation, docs/design.md)\n",
        static_cast<unsigned long long>(in.crossing_sync_sends));
  }
  if (!in.output_path.empty()) {
    os << "onlinews: results: " << in.output_path << "\n";
  } else {
    os << "onlinews: no result file was written (see the warning above)\n";
  }
  os << "onlinews: ----------------------------------------------------------------------------\n";
  std::fputs(os.str().c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace onlinews::postpass
