// Process-wide state of the runtime (internal to runtime/).  Created at
// MPI_Init, destroyed at MPI_Finalize; touched by the MPI thread only, except
// where a member says otherwise.
#pragma once
#include <mpi.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis_thread.hpp"
#include "clock_sync.hpp"
#include "comms.hpp"
#include "config.hpp"
#include "cut_protocol.hpp"
#include "pipeline.hpp"
#include "inline_analysis/analysis.hpp"
#include "io/h5output.hpp"
#include "io/live_log.hpp"
#include "mpi_t_pvars.hpp"
#include "requests.hpp"
#include "runtime.hpp"

namespace onlinews::rt {

class MpiTransport;

// The analysis options the configuration gives: the run's analyzer and the
// test reference's (reference.cpp) must be alike.
inline analysis::AnalysisOptions analysis_options(const Config& c) {
  analysis::AnalysisOptions o;
  o.selection = c.analyses;
  o.min_traced_wait = c.min_traced_wait;
  return o;
}

struct MessageInfo {  // MPI_Mprobe / MPI_Improbe result, until MPI_Mrecv / MPI_Imrecv
  std::uint16_t comm = 0;
  std::int32_t source = 0, tag = 0;
  std::uint32_t id = 0;  // message handle id in Probe/Match events
};

struct EpochTotals {
  int epochs = 0;
  double analysis_seconds = 0;  // sum over epochs of the busiest rank's local analysis work
  double forward_seconds = 0, backward_seconds = 0;  // its two halves (slowest rank each)
  std::uint64_t events = 0, dropped = 0, cross_epoch = 0, unmatched = 0;
  int skipped = 0;              // epochs analyzed for time only (lost events)
  std::uint64_t sync_cuts = 0, requested_cuts = 0;
  // Summed over ranks and epochs (inline_analysis/run_facts.def).
#define ONLINEWS_FACT(name, type, what) type name = 0;
#include "inline_analysis/run_facts.def"
#undef ONLINEWS_FACT
  double latency_max = 0;       // seconds from a boundary until its epoch's rows were written
  std::uint64_t dropped_unregistered = 0;  // events of threads without a buffer, already reported
};

struct State {
  Config cfg;
  std::vector<std::string> warnings;
  int rank = 0, size = 1;
  int thread_level = MPI_THREAD_SINGLE;
  MPI_Comm tool_world = MPI_COMM_NULL;  // epoch control, exchanges, output

  analysis::Definitions defs;
  CommRegistry comms{defs};
  RequestTable requests;  // MPI thread only
  std::unordered_map<std::uint64_t, MessageInfo> messages;
  BufferRegistry buffers;  // any thread (lock-free)
  ClockMapper clock;
  ClockSync clock_sync;  // offsets between hosts (MPI thread)
  const char* clock_name = "";
  // The analysis reads its own copy of the definitions, refreshed between
  // epochs (pipeline.cpp): the application may create communicators while an
  // epoch is being analyzed.
  analysis::Definitions analysis_defs;
  std::unique_ptr<analysis::Analyzer> analyzer;
  std::unique_ptr<MpiTransport> transport;
  std::unique_ptr<CutProtocol> cuts;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<AnalysisThread> analysis_thread;  // ONLINEWS_ANALYSIS_THREAD (null: off or not created)

  std::string exe, command, mpi_library, start_time;
  std::uint64_t t_init_raw = 0;     // this rank's MPI_Init entry (raw clock)
  std::uint64_t start_ns = 0;       // earliest MPI_Init entry over all ranks (ns)
  std::uint64_t last_epoch_ns = 0;  // end of the previous epoch (this rank)
  std::uint64_t finalize_leave_ns = 0;

  // Output (name decided by rank 0 and broadcast; the file is rank 0's).
  std::string output_path;
  bool output_ok = false;
  bool appending = false;  // MPI thread: rank 0 is between the parts of an epoch's append
  std::unique_ptr<io::H5Output> h5;          // rank 0
  PvarSampler pvars;                         // MPI_T performance variables (ONLINEWS_MPI_T_PVARS)
  std::map<std::uint32_t, std::vector<double>> pvar_samples;  // MPI thread: by boundary number
  std::string eager_limits;                  // the eager limits and the variables they came from
  io::LiveLog live;                          // rank 0: <name>.live, one line per epoch (--follow)
  std::vector<io::LocationRow> locations;    // rank 0: global column order
  std::unordered_map<std::uint64_t, int> location_column;  // rank 0: (rank<<32|thread) -> column

  io::Topology topology;  // first Cartesian and graph communicators spanning all ranks (output_grid.cpp)
  bool have_topology = false;
  std::vector<std::int32_t> my_coords;  // this rank's coordinates in it
  std::vector<std::int32_t> graph_out;  // this rank's out-neighbours (world ranks) in the first graph topology

  EpochTotals totals;
  // Calls on communicators the tool does not track (intercommunicators, ...),
  // recorded as time only.  Calls from threads other than the MPI thread are
  // counted per thread (ThreadBuffer::time_only_calls).
  std::atomic<std::uint64_t> untracked_calls{0};
  int mixed_comms = 0;  // communicators used by threads that are not analyzed (MPI thread)
  // Groups of MPI_Win_post/start as ranks in their window (defs.groups),
  // interned: id by rank list (MPI thread).
  std::map<std::vector<int>, std::uint32_t> group_ids;
  // RMA synchronization calls MPI rejected since the last epoch's output
  // (MPI thread; added to the epoch's rma_sync_errors).
  std::uint64_t rma_rejected = 0;
  bool warned_rma_rejected = false;
};

// The state, or nullptr before MPI_Init / after MPI_Finalize / when disabled.
State* state();

// Prints "onlinews: <msg>" to stderr (rank 0 only when `rank0_only`).
void log_warning(const std::string& msg, bool rank0_only = true);
void log_info(const std::string& msg);  // rank 0, verbose >= 1

// A raw timestamp of this rank -> ns on the global (rank 0) clock, for the
// window being drained.
inline std::uint64_t global_ns(const State& s, std::uint64_t raw) {
  return s.clock_sync.to_global(s.clock.to_ns(raw));
}

// epoch.cpp
// After an eligible collective on `comm_id` whose Enter and Leave were
// recorded at `t_enter` and `t_leave` (raw clock).
void on_eligible_collective(int comm_id, std::uint64_t t_enter, std::uint64_t t_leave);
// MPI_Finalize, whose Enter and Leave were recorded at `t_enter` and
// `t_leave`: the last boundary, then the pipeline driven to its end.
void final_epoch(std::uint64_t t_enter, std::uint64_t t_leave);
// output.cpp
void open_output(State& s);
// Gathers the epoch's rows at rank 0 and appends them to the file (a
// coroutine of the pipeline: collective over all ranks).
analysis::Task<> write_epoch_output(State& s, const analysis::EpochFacts& facts, double analysis_seconds,
                                    std::uint8_t cut_kind);
void finish_output(State& s);
// ONLINEWS_TEST_REFERENCE: the run again as one epoch, into its own file
// (runtime/reference.cpp).  Collective over the tool's world communicator,
// after finish_output().
void write_reference(State& s);

}  // namespace onlinews::rt
