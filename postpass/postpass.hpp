// Stage header of postpass/: what happens once, at MPI_Finalize, over all
// ranks: unifying definitions (call paths and regions get one global id) and
// the end-of-run summary.  (The critical-path indicators join here later.)
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "inline_analysis/callpaths.hpp"
#include "inline_analysis/definitions.hpp"
#include "inline_analysis/metrics.hpp"
#include "io/h5output.hpp"

namespace onlinews::postpass {

// The wait states, inclusive values, each waiting second counted once
// (Wrong Order lies inside Late Sender): what is not processing time.
inline constexpr analysis::Metric kWaitStates[] = {
    analysis::Metric::mpi_latesender,      analysis::Metric::mpi_latereceiver,
    analysis::Metric::mpi_barrier_wait,    analysis::Metric::mpi_barrier_completion,
    analysis::Metric::mpi_wait_nxn,        analysis::Metric::mpi_nxn_completion,
    analysis::Metric::mpi_latebroadcast,   analysis::Metric::mpi_earlyreduce,
    analysis::Metric::mpi_earlyscan,       analysis::Metric::mpi_init_completion,
    analysis::Metric::mpi_finalize_wait,   analysis::Metric::mpi_rma_wait_at_create,
    analysis::Metric::mpi_rma_wait_at_free, analysis::Metric::mpi_rma_wait_at_fence,
    analysis::Metric::mpi_rma_sync_late_post, analysis::Metric::mpi_rma_early_wait,
    analysis::Metric::mpi_rma_comm_late_post, analysis::Metric::mpi_rma_sync_lock_competition,
    analysis::Metric::mpi_rma_comm_lock_competition, analysis::Metric::mpi_rma_wait_for_progress,
    analysis::Metric::mpi_barrier_wait_nb, analysis::Metric::mpi_wait_nxn_nb,
    analysis::Metric::mpi_latebroadcast_nb, analysis::Metric::mpi_earlyreduce_nb,
    analysis::Metric::mpi_wait_neighbor_nb, analysis::Metric::mpi_wait_neighbor,
};
// OpenMP: waits of threads for their team, and idle threads (not in
// kWaitStates: the critical path's processing time keeps them).  The
// summary lists both, and the file names both (attribute wait_states).
inline constexpr analysis::Metric kOmpWaits[] = {
    analysis::Metric::omp_ebarrier_wait, analysis::Metric::omp_ibarrier_wait,
    analysis::Metric::omp_lock_contention_critical, analysis::Metric::omp_lock_contention_api,
    analysis::Metric::omp_idle_threads,
};
// The names of both lists (the file's attribute wait_states, the live log).
inline std::vector<std::string> wait_state_names() {
  std::vector<std::string> out;
  for (analysis::Metric m : kWaitStates) out.emplace_back(analysis::metric_info(m).name);
  for (analysis::Metric m : kOmpWaits) out.emplace_back(analysis::metric_info(m).name);
  return out;
}

struct Unified {
  std::int64_t n_callpaths = 0;              // all ranks
  std::vector<std::int64_t> callpath_map;    // this rank: local call path -> global id
  std::vector<io::RegionRow> regions;        // rank 0: global region table
  std::vector<io::CallpathRow> callpaths;    // rank 0: global call-path table
  std::vector<io::CallsiteRow> callsites;    // rank 0: global call-site table
};

// Names code addresses of this process (callsites.cpp): function (from the
// symbol table, demangled), file and line (DWARF, with libdw).  Opening it
// reads the process's modules once (about a millisecond); name() is then
// a lookup.  Not thread-safe.  function() names the function only (no
// line tables: cheaper for addresses of many functions; a compiler's clone,
// foo.constprop.0, as foo), and an address no symbol covers by its object,
// "[libfoo.so]"; it reads the modules again
// when an address lies in none of them (a library loaded since).
class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  io::CallsiteRow name(std::uint64_t pc) const;
  std::string function(std::uint64_t pc);

 private:
  void* dwfl_ = nullptr;  // Dwfl* (libdw), nullptr without
  int reports_ = 0;       // module reports read (function())
};
// Names this process's call sites (return addresses), in order.
std::vector<io::CallsiteRow> name_callsites(const std::vector<std::uint64_t>& sites);

// Collective over `comm` (rank 0 does the merging).
Unified unify(const analysis::Definitions& defs, const analysis::CallpathTree& tree, MPI_Comm comm);

// Critical-path indicators from the accumulated critical-path profile.
// `incl` holds, per local location, inclusive metric values by global call
// path (incl[l][cp * kMetricCount + m]); the indicator metrics are filled in.
// Collective over `comm`.
void critical_path_indicators(std::vector<std::vector<double>>& incl, std::int64_t n_callpaths, MPI_Comm comm);

struct SummaryInput {
  std::string output_path;   // empty if no file was written
  int ranks = 1, max_threads = 1, epochs = 0;
  double wall_seconds = 0, analysis_seconds = 0;
  int analysis_thread_ranks = 0;       // ranks that ran an analysis thread
  double analysis_thread_seconds = 0;  // its local work, summed over those ranks
  std::uint64_t dropped_events = 0, cross_epoch_messages = 0, unmatched_receives = 0;
  std::uint64_t untracked_calls = 0;      // on communicators the tool does not track (time only)
  std::uint64_t other_thread_calls = 0;   // of threads other than the MPI thread (time only)
  std::uint64_t mixed_communicators = 0;  // used by such threads: their messages are not analyzed
  std::uint64_t omp_nested_teams = 0;     // nested OpenMP parallel regions (not analyzed as teams)
  // ONLINEWS_SAMPLING (0: off): samples placed in computation, outside it,
  // and lost (full rings, or taken before a window end already cut).
  int sampling_hz = 0;
  std::uint64_t samples_placed = 0, samples_outside = 0, samples_lost = 0;
  int clock_domains = 1;                  // hosts (or skewed test ranks) with their own clock
  double clock_offset_max_seconds = 0;    // largest offset measured at the last measurement
  double clock_offset_error_seconds = 0;  // how far that measurement's offsets can be off
  int skipped_epochs = 0;
  std::uint64_t sync_cuts = 0, requested_cuts = 0;  // epochs ended by each kind of cut
  // Summed over ranks and epochs (inline_analysis/run_facts.def).
#define ONLINEWS_FACT(name, type, what) type name = 0;
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
  double min_traced_wait = 0;
  int rows = 8;
};

// Collective over `comm`: reduces the inclusive metric values (`incl`,
// global-call-path major: incl[cp * kMetricCount + m]) and prints the summary
// on rank 0's stderr.  `unified` supplies names on rank 0.
void print_summary(const SummaryInput& in, const std::vector<double>& incl, std::int64_t n_callpaths,
                   const Unified& unified, MPI_Comm comm);

// "main > solve > MPI_Recv" for a global call path (rank 0).
std::string callpath_name(const Unified& u, std::int64_t cp);
// "function (file.c:line)", or the function alone without debug information.
std::string callsite_name(const io::CallsiteRow& site);

}  // namespace onlinews::postpass
