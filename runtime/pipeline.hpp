// The asynchronous epoch pipeline (DESIGN.md §4).  Events keep being
// recorded into the threads' buffers while earlier windows are analyzed:
// the pipeline drains the buffers, cuts every location's stream into
// windows at the boundaries, and runs one coroutine that analyzes window
// after window and appends each epoch's rows to the file.  The progress
// engine (progress.cpp) advances it in slices at MPI wrapper entries of the
// MPI thread; the local work of the analysis runs on the analysis thread
// (analysis_thread.hpp) when there is one.  Nothing here blocks.
//
// Every boundary is a time T on the global clock: for a synchronizing cut
// the MPI thread's clock right after the cut collective (so the window ends
// exactly there), for a requested cut the time rank 0 announced.  An event
// belongs to the window of its call's group: a call's completion events
// (completes_call) stay with its Leave, its start events (Send, SendRequest,
// RecvRequest) with its Enter.  On one clock a message can then only cross a
// boundary forward (sent before it, received after).
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "inline_analysis/analysis.hpp"
#include "sample_placer.hpp"

namespace onlinews::rt {

struct State;

// The share of a buffer at which the pipeline drains it while no window is
// being cut (Pipeline::drain); cuts are due earlier (kCutFill).
constexpr double kDrainFill = 0.5;

namespace cutkind {
constexpr std::uint8_t kSync = 1;       // inside a world-spanning synchronizing collective
constexpr std::uint8_t kRequested = 2;  // agreed by the ranks (cut_protocol.hpp)
constexpr std::uint8_t kFinal = 4;      // MPI_Finalize
}  // namespace cutkind

struct Boundary {
  std::uint32_t number = 0;  // 1, 2, ...: ends window number - 1
  std::uint8_t kind = 0;     // cutkind
  std::uint64_t raw = 0;     // sync cuts: the MPI thread's raw clock at the cut (0: none);
                             // requested cuts: no later than this (0: no limit)
  std::uint64_t time = 0;    // global ns (for sync cuts: `raw`, mapped like the events)
  bool mapped = false;
};

class Pipeline {
 public:
  explicit Pipeline(State& s);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // MPI thread: boundary `b` is agreed (cut protocol or sync decision).
  void add_boundary(const Boundary& b);
  // What the pipeline waits for after advance(): other ranks, more time on
  // this thread, the analysis thread (its local work), or nothing (done).
  enum class Wait { Remote, Slice, Helper, Done };
  // MPI thread, at a progress point: runs the analysis's sections that need
  // this thread and, with `compute` (or without an analysis thread), its
  // local work, for at most `budget` (0: until it waits for other ranks or
  // the analysis thread, or is done).
  Wait advance(std::chrono::nanoseconds budget, bool compute);
  bool finished() const { return finished_; }
  // Boundaries whose windows are not analyzed completely yet.
  std::size_t backlog() const { return boundaries_.size(); }
  // True while an agreed window waits to be analyzed or written (the one in
  // progress included).
  bool has_work() const { return in_window_ || !boundaries_.empty(); }
  // Events of the MPI thread not assigned to a window yet (buffer and
  // drained), for the cut requests.
  std::size_t open_events() const;
  // MPI thread, at a progress point: moves buffers that pass half full into
  // the pipeline, also while the analysis coroutine waits for other ranks
  // or has not started (else the next events would be dropped); and keeps
  // every ring's pages resident ahead of its writer (EventRing::populate_ahead).
  void relieve();
  bool failed() const { return failed_; }
  // MPI_Finalize's safety net (epoch.cpp): the epochs not analyzed yet are
  // given up.  The suspended analysis is never resumed (nor destroyed: the
  // scheduler may still refer to its frames).
  void abandon() { finished_ = failed_ = true; }
  // MPI thread, before control returns to the application: completes an
  // epoch's append that slices in a wait left in parts, so that a SIGKILL
  // between two application calls finds the file with whole epochs.
  void finish_append();
  // ONLINEWS_TEST_REFERENCE: every window's events as analyzed (before any
  // clock correction), concatenated per location, and where the run's
  // first and last boundaries lie.  MPI thread, once the pipeline finished.
  std::vector<analysis::LocationWindow> take_reference() { return std::move(reference_); }
  std::int64_t last_boundary_time() const { return static_cast<std::int64_t>(last_.time); }
  // ONLINEWS_SAMPLING: samples placed in computation, left out (outside
  // it), and dropped as late, summed over this process's locations.
  struct SampleCounts {
    std::uint64_t placed = 0, outside = 0, late = 0;
  };
  SampleCounts sample_counts() const;

 private:
  analysis::Task<> loop();
  analysis::Task<> run();  // loop(), then Scheduler::finish() (errors kept in error_)
  // Drains the buffers (all, or only those filling up) and maps times to
  // global ns.
  void drain(bool all);
  // Cuts the next window out of the drained streams if every location's
  // part is complete.
  bool take_window(std::vector<analysis::LocationWindow>& windows, Boundary& b);
  // Once a window is analyzed: its storage takes the drained events (one
  // vector at a window's size, not two).
  void reuse_window_storage(std::vector<analysis::LocationWindow>& windows);
  void refresh_definitions(const Boundary& b);
  void keep_reference(const std::vector<analysis::LocationWindow>& windows);

  State& s_;
  analysis::Task<> task_;
  bool started_ = false, finished_ = false, failed_ = false;
  bool finishing_ = false;  // finish_append(): stop right after the epoch's output
  std::string error_;       // why the analysis failed (set by whichever thread ran it)
  std::deque<Boundary> boundaries_;          // agreed, window not analyzed yet
  Boundary last_{0, cutkind::kSync, 0, 0, true};  // where the next window starts (MPI_Init: synchronizing)
  bool in_window_ = false;  // a window taken from boundaries_ is analyzed or written
  std::vector<std::vector<Event>> pending_;  // per location: drained, not in a window yet
  std::vector<std::uint64_t> dropped_;       // per location: drops since its last window
  std::vector<analysis::LocationWindow> reference_;  // ONLINEWS_TEST_REFERENCE only (take_reference)
  // ONLINEWS_SAMPLING (sampling.hpp): per location, its samples' placer.
  std::vector<SamplePlacer> placers_;
  std::unique_ptr<SampleNames> sample_names_;
  std::vector<Sample> fresh_;  // (scratch)
};

}  // namespace onlinews::rt
