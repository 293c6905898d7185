// Stage header of inline_analysis: one Analyzer per rank replays each epoch's
// window of events (forward, then backward) against the other ranks through a
// Transport, and keeps the run's call paths and metric values.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "callpaths.hpp"
#include "definitions.hpp"
#include "metrics.hpp"
#include "profile.hpp"
#include "runtime/event.hpp"
#include "transport.hpp"

namespace onlinews::analysis {

// Events of one location (thread) for one epoch, times already in ns.
struct LocationWindow {
  int location = 0;            // thread index on this rank
  std::vector<Event> events;
  std::uint64_t dropped = 0;   // events lost to a full buffer in this window
};

// How a window is bounded.  A synchronizing cut (a collective spanning and
// synchronizing all ranks, or MPI_Init/MPI_Finalize) is a synchronization
// point of every pair of ranks: no synchronization interval reaches across
// it.  A requested cut is not: intervals that reach back across it are
// truncated there (and counted), and the critical path's holder at a
// window's end is found only later (patterns/critical_path.cpp).
struct WindowBounds {
  bool starts_synchronized = true;
  bool ends_synchronized = true;
  std::int64_t begin = 0;  // ns: the boundary the window starts at (0: its first event)
  std::int64_t end = 0;    // ns: the boundary it ends at (0: its last event)
  bool last = true;        // no window follows (the run's last, or one analyzed alone)
};

struct AnalysisOptions {
  // Pattern names or groups to run ("all" = every pattern).  Time and visits
  // always run.
  std::vector<std::string> selection{"all"};
  // Point-to-point waits shorter than this (seconds) are not traced to
  // their causes (no synchronization point: delay costs and the critical
  // path pass them by); counted in EpochFacts::untraced_*.
  double min_traced_wait = 0;
};

// Per-epoch facts of one rank (reduced over ranks by the caller for output).
struct EpochFacts {
  int index = 0;
  std::int64_t t_begin = 0;             // ns: first event of the window
  std::int64_t t_end = 0;               // ns: last event of the window
  std::uint64_t events = 0;
  std::uint64_t dropped_events = 0;
  std::uint64_t cross_epoch_messages = 0;  // receives matched to a send of an earlier epoch
  std::uint64_t unmatched_receives = 0;    // receives without a send (should stay 0)
  bool comm_analysis_skipped = false;      // some rank dropped events: only time was analyzed
  // Counted facts (run_facts.def).  crossing_sync_sends: the sending call
  // that may have waited was analyzed in a window before the receiver's
  // reply (the wait is lost), or the receive was posted in a window walked
  // before the wait's (counted by the receiver: the wait is found, its delay
  // costs are not).
#define ONLINEWS_FACT(name, type, what) type name = 0;
#include "run_facts.def"
#undef ONLINEWS_FACT
  // Local work (not waiting), as far as the driver's slices show it:
  double forward_seconds = 0;              // annotation, matching, collectives, forward walk, replies
  double backward_seconds = 0;             // backward walk and the replay at synchronization points
};

class Analyzer {
 public:
  Analyzer(const Definitions& defs, AnalysisOptions options);
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Replays one epoch.  Collective over all ranks of `transport`; suspends
  // on its scheduler whenever it waits for them.
  Task<EpochFacts> run_epoch(std::vector<LocationWindow>& windows, Transport& transport, WindowBounds bounds = {});

  // Communicators every member freed, agreed in the last epoch: the runtime
  // may release its duplicates now.
  const std::vector<std::uint64_t>& retired_comms() const;
  const CallpathTree& callpaths() const;
  const Profile& profile() const;
  int epochs() const;
  // Names of the patterns that run (for the output and the summary).
  std::vector<std::string> active_patterns() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True if `name` (a pattern name or group) is selected by `selection`.
bool selected(const std::vector<std::string>& selection, const char* name, const char* group);
// `selection` plus what the selected patterns need (the root causes need
// the wait-state patterns); what the Analyzer runs.
std::vector<std::string> effective_selection(std::vector<std::string> selection);
// The entries of `selection` that name no pattern or group, and the list of
// valid names (for messages).
std::vector<std::string> unknown_selections(const std::vector<std::string>& selection);
std::string known_selections();

}  // namespace onlinews::analysis
