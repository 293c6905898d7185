// MPI_Finalize: unify definitions, write the /profile matrices (gathered to
// rank 0, or parallel HDF5: io/h5output.hpp), definitions, topology, final
// attributes and the XDMF file, then print the summary.  Collective over the
// tool's world communicator.
#include <algorithm>

#include "inline_analysis/metrics.hpp"
#include "mpi_transport.hpp"
#include "output_grid.hpp"
#include "postpass/postpass.hpp"
#include "sampling.hpp"
#include "state.hpp"
#if ONLINEWS_HAVE_OMPT
#include "ompt/ompt.hpp"
#endif

namespace onlinews::rt {
namespace {

// Root attributes of the counted facts: integers as int64, seconds as double.
std::int64_t attr_value(std::uint64_t v) { return static_cast<std::int64_t>(v); }
double attr_value(double v) { return v; }

}  // namespace

void finish_output(State& s) {
  using analysis::kMetricCount;
  ToolScope tool;
  const analysis::Profile& prof = s.analyzer->profile();
  const postpass::Unified u = postpass::unify(s.defs, s.analyzer->callpaths(), s.tool_world);
  const auto ncp = static_cast<std::size_t>(u.n_callpaths);

  // Per local location: run values by global call path, inclusive; then the
  // critical-path indicators; then exclusive values for the file.
  const int nloc = prof.locations();
  std::vector<std::vector<double>> excl(static_cast<std::size_t>(nloc));
  for (int l = 0; l < nloc; ++l) {
    const auto& run = prof.run_values(l);
    auto& e = excl[static_cast<std::size_t>(l)];
    e.assign(ncp * kMetricCount, 0.0);
    const std::size_t local_cps = std::min(run.size() / kMetricCount, u.callpath_map.size());
    for (std::size_t cp = 0; cp < local_cps; ++cp) {
      const auto g = static_cast<std::size_t>(u.callpath_map[cp]);
      for (int m = 0; m < kMetricCount; ++m) {
        e[g * kMetricCount + static_cast<std::size_t>(m)] += run[cp * kMetricCount + static_cast<std::size_t>(m)];
      }
    }
  }
  postpass::critical_path_indicators(excl, u.n_callpaths, s.tool_world);
  std::vector<double> incl_all(ncp * kMetricCount, 0.0);  // summed over this rank's locations
  for (auto& e : excl) {
    for (std::size_t i = 0; i < e.size(); ++i) incl_all[i] += e[i];
    for (std::size_t g = 0; g < ncp; ++g) analysis::to_exclusive(&e[g * kMetricCount], 1);
  }

  // Run-wide facts.
  std::uint64_t fin = s.finalize_leave_ns, fin_max = 0;
  PMPI_Allreduce(&fin, &fin_max, 1, MPI_UINT64_T, MPI_MAX, s.tool_world);
  const double wall = fin_max > s.start_ns ? 1e-9 * static_cast<double>(fin_max - s.start_ns) : 0.0;
  int threads = std::max(nloc, 1), max_threads = 1;
  PMPI_Allreduce(&threads, &max_threads, 1, MPI_INT, MPI_MAX, s.tool_world);
  // Sums: [0] calls on untracked communicators, [1] unsuccessful polls
  // folded into visits, [2] calls of threads that are not analyzed (time
  // only), [3] ranks with an analysis thread, [4] nested OpenMP teams, [5]
  // OpenMP loop chunks dispatched; ONLINEWS_SAMPLING: [6] samples placed in
  // computation, [7] outside it, [8] late, [9] lost in full rings, [10]
  // threads without a timer, [11] ranks that sampled; [12] times the
  // timestamp counter left CLOCK_MONOTONIC's rate (ClockMapper).
  unsigned long long counts[13] = {s.untracked_calls.load() + s.comms.untracked(), 0, 0,
                                   s.analysis_thread ? 1ULL : 0ULL},
                     sums[13] = {};
  counts[12] = s.clock.rate_changes();
#if ONLINEWS_HAVE_OMPT
  counts[4] = ompt::nested_teams();
#endif
  for (int i = 0; i < s.buffers.count(); ++i) {
    if (const ThreadBuffer* b = s.buffers.at(i)) {
      counts[1] += b->coalesced_polls();
      counts[2] += b->time_only_calls();
      counts[5] += b->dispatched_chunks();
    }
  }
  if (s.cfg.sampling > 0) {
    const Pipeline::SampleCounts sc = s.pipeline->sample_counts();
    counts[6] = sc.placed;
    counts[7] = sc.outside;
    counts[8] = sc.late;
    counts[9] = samples_lost();
    counts[10] = sampling_failed_threads();
    counts[11] = sampling_started() ? 1 : 0;
  }
  PMPI_Allreduce(counts, sums, 13, MPI_UNSIGNED_LONG_LONG, MPI_SUM, s.tool_world);
  const unsigned long long all_untracked = sums[0], all_polls = sums[1], all_other_thread = sums[2],
                           helper_ranks = sums[3], nested_teams = sums[4], omp_chunks = sums[5];
  const unsigned long long* all_samples = sums + 6;
  // The most mixed communicators on one rank.
  unsigned long long mixed = static_cast<unsigned long long>(s.mixed_comms), mixed_comms = 0;
  PMPI_Allreduce(&mixed, &mixed_comms, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, s.tool_world);
  const bool sampling_on_any = all_samples[5] > 0;
  // The analysis's local work run by analysis threads, summed over ranks.
  double helper_seconds = s.transport->scheduler().helper_seconds(), all_helper_seconds = 0;
  PMPI_Allreduce(&helper_seconds, &all_helper_seconds, 1, MPI_DOUBLE, MPI_SUM, s.tool_world);

  // Topologies: every rank's Cartesian coordinates and graph edges.
  gather_topology(s);

  // Locations in column order (rank 0 knows it from the epoch rows).
  int ncols = static_cast<int>(s.locations.size());
  PMPI_Bcast(&ncols, 1, MPI_INT, 0, s.tool_world);
  std::vector<io::LocationRow> locs = s.locations;
  locs.resize(static_cast<std::size_t>(ncols));
  PMPI_Bcast(locs.data(), ncols * 2, MPI_INT32_T, 0, s.tool_world);
  std::vector<int> columns, column_location;
  for (int c = 0; c < ncols; ++c) {
    if (locs[static_cast<std::size_t>(c)].rank == s.rank && locs[static_cast<std::size_t>(c)].thread < nloc) {
      columns.push_back(c);
      column_location.push_back(locs[static_cast<std::size_t>(c)].thread);
    }
  }

  std::vector<io::MetricDef> metrics;
  for (int m = 0; m < kMetricCount; ++m) {
    const auto& i = analysis::metric_info(m);
    metrics.push_back({i.name, i.display, i.unit, i.description, i.parent});
  }
  int ok = s.output_ok ? 1 : 0;
  if (s.rank == 0 && s.h5 && s.h5->failed()) {
    s.h5->close();  // (its writes diverted: io/h5output.cpp)
    ok = 0;
  } else if (s.rank == 0 && s.h5) {
    bool w = s.h5->write_definitions(u.regions, u.callpaths, s.locations, metrics, u.callsites);
    if (s.have_topology || !s.topology.graph_kind.empty()) w = s.h5->write_topology(s.topology) && w;
    s.h5->set_attr("epochs", static_cast<std::int64_t>(s.totals.epochs));
    s.h5->set_attr("wall_seconds", wall);
    s.h5->set_attr("dropped_events", static_cast<std::int64_t>(s.totals.dropped));
    s.h5->set_attr("max_threads", static_cast<std::int64_t>(max_threads));
    s.h5->set_attr("cross_epoch_messages", static_cast<std::int64_t>(s.totals.cross_epoch));
    s.h5->set_attr("unmatched_receives", static_cast<std::int64_t>(s.totals.unmatched));
    s.h5->set_attr("unsupported_calls", static_cast<std::int64_t>(all_untracked + all_other_thread));
    s.h5->set_attr("untracked_calls", static_cast<std::int64_t>(all_untracked));
    s.h5->set_attr("other_thread_calls", static_cast<std::int64_t>(all_other_thread));
    s.h5->set_attr("mixed_communicators", static_cast<std::int64_t>(mixed_comms));
    s.h5->set_attr("omp_nested_teams", static_cast<std::int64_t>(nested_teams));
    s.h5->set_attr("omp_dispatched_chunks", static_cast<std::int64_t>(omp_chunks));
    s.h5->set_attr("time_only_epochs", static_cast<std::int64_t>(s.totals.skipped));
    s.h5->set_attr("sync_cuts", static_cast<std::int64_t>(s.totals.sync_cuts));
    s.h5->set_attr("requested_cuts", static_cast<std::int64_t>(s.totals.requested_cuts));
    s.h5->set_attr("coalesced_polls", static_cast<std::int64_t>(all_polls));
    s.h5->set_attr("sampling_hz", static_cast<std::int64_t>(sampling_on_any ? s.cfg.sampling : 0));
    s.h5->set_attr("samples_placed", static_cast<std::int64_t>(all_samples[0]));
    s.h5->set_attr("samples_outside", static_cast<std::int64_t>(all_samples[1]));
    s.h5->set_attr("samples_late", static_cast<std::int64_t>(all_samples[2]));
    s.h5->set_attr("samples_lost", static_cast<std::int64_t>(all_samples[3]));
    s.h5->set_attr("sampling_failed_threads", static_cast<std::int64_t>(all_samples[4]));
#define ONLINEWS_FACT(name, type, what) s.h5->set_attr(#name, attr_value(s.totals.name));
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
    s.h5->set_attr("clock_domains", static_cast<std::int64_t>(s.clock_sync.domains()));
    s.h5->set_attr("clock_offset_max_seconds", s.clock_sync.max_offset_seconds());
    s.h5->set_attr("clock_offset_error_seconds", s.clock_sync.max_offset_error_seconds());
    s.h5->set_attr("clock_rate_changes", static_cast<std::int64_t>(sums[12]));
    s.h5->set_attr("analysis_forward_seconds", s.totals.forward_seconds);
    s.h5->set_attr("analysis_backward_seconds", s.totals.backward_seconds);
    s.h5->set_attr("analysis_thread_ranks", static_cast<std::int64_t>(helper_ranks));
    s.h5->set_attr("analysis_thread_seconds", all_helper_seconds);
    s.h5->set_attr("analyses", io::comma_joined(s.analyzer->active_patterns()));
    s.h5->set_attr("wait_states", io::comma_joined(postpass::wait_state_names()));
    // Eager vs. rendezvous: the limits and the library variables they came
    // from (mpi_t.cpp), and the sampled MPI_T performance variables.
    s.h5->set_attr("eager_limits", s.eager_limits);
    s.h5->set_attr("eager_limit_local", static_cast<std::int64_t>(s.defs.eager_limit_local));
    s.h5->set_attr("eager_limit_remote", static_cast<std::int64_t>(s.defs.eager_limit_remote));
    s.h5->set_attr("mpi_t_pvars", io::comma_joined(s.pvars.names()));
    s.h5->close();
    if (!w || s.h5->failed()) {
      log_warning("writing definitions to '" + s.output_path + "' failed" +
                  (s.h5->failed() ? " (is the disk full, or a quota exceeded?): no profile is written to it" : ""));
    }
    if (s.h5->failed()) ok = 0;
  }
  PMPI_Bcast(&ok, 1, MPI_INT, 0, s.tool_world);
  if (ok) {
    std::string err;
    const std::size_t k = columns.size();
    const bool written = io::write_profile(
        s.output_path, s.tool_world, metrics, u.n_callpaths, ncols, columns,
        [&](int m, std::vector<double>& block) {
          for (std::size_t c = 0; c < k; ++c) {
            const auto& e = excl[static_cast<std::size_t>(column_location[c])];
            for (std::size_t g = 0; g < ncp; ++g) block[g * k + c] = e[g * kMetricCount + static_cast<std::size_t>(m)];
          }
        },
        err, s.cfg.test_parallel_profile);
    if (!written && !err.empty()) log_warning(err);
    if (written && s.rank == 0) {
      // Mark the file complete (a killed job leaves complete = 0 and only
      // the epochs it finished).
      {
        const std::unique_ptr<io::H5Output> h5 = io::new_h5output(err);
        if (h5 != nullptr && h5->reopen(s.output_path)) h5->set_attr("complete", static_cast<std::int64_t>(1));
      }
      // The views on the process grid, and the ParaView sidecar.
      const io::Grid grid = decide_grid(s);
      std::vector<double> epoch_ends;
      {
        const std::unique_ptr<io::H5Output> h5 = io::new_h5output(err);
        if (h5 == nullptr || !h5->reopen(s.output_path) || !h5->write_grid_views(view_names(), grid, epoch_ends)) {
          log_warning("writing /views to '" + s.output_path + "' failed");
        }
      }
      if (!io::write_xdmf(s.output_path, view_names(), grid, epoch_ends, err)) log_warning(err);
      s.live.complete(s.totals.epochs, wall);  // (last: the file is finished, and closed)
    }
  }

  if (s.cfg.verbose >= 1) {
    postpass::SummaryInput in;
    in.output_path = s.output_ok ? s.output_path : "";
    in.ranks = s.size;
    in.max_threads = max_threads;
    in.epochs = s.totals.epochs;
    in.wall_seconds = wall;
    in.analysis_seconds = s.totals.analysis_seconds;
    in.analysis_thread_ranks = static_cast<int>(helper_ranks);
    in.analysis_thread_seconds = all_helper_seconds;
    in.dropped_events = s.totals.dropped;
    in.cross_epoch_messages = s.totals.cross_epoch;
    in.unmatched_receives = s.totals.unmatched;
    in.clock_domains = s.clock_sync.domains();
    in.clock_offset_max_seconds = s.clock_sync.max_offset_seconds();
    in.clock_offset_error_seconds = s.clock_sync.max_offset_error_seconds();
    in.untracked_calls = all_untracked;
    in.other_thread_calls = all_other_thread;
    in.mixed_communicators = mixed_comms;
    in.omp_nested_teams = nested_teams;
    in.sampling_hz = sampling_on_any ? static_cast<int>(s.cfg.sampling) : 0;
    in.samples_placed = all_samples[0];
    in.samples_outside = all_samples[1];
    in.samples_lost = all_samples[2] + all_samples[3];
    in.skipped_epochs = s.totals.skipped;
    in.sync_cuts = s.totals.sync_cuts;
    in.requested_cuts = s.totals.requested_cuts;
#define ONLINEWS_FACT(name, type, what) in.name = s.totals.name;
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
    in.min_traced_wait = s.cfg.min_traced_wait;
    in.rows = static_cast<int>(s.cfg.summary_rows);
    postpass::print_summary(in, incl_all, u.n_callpaths, u, s.tool_world);
  }
}

}  // namespace onlinews::rt
