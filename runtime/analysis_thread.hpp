// The analysis thread (docs/design.md, "The analysis thread").  It runs the
// local work of the epoch pipeline (the sections the coroutine marks
// Where::Any: forward and backward replay, patterns, profiles), so that the
// application's MPI thread only does what needs it: the tool's MPI calls,
// the buffers and the file.  It makes no MPI call (any thread level works),
// blocks every signal (the application's handlers run on its own threads),
// and sleeps while the pipeline has nothing for it.
#pragma once
#include <atomic>
#include <string>
#include <thread>

#include "inline_analysis/task.hpp"

namespace onlinews::rt {

// ONLINEWS_ANALYSIS_THREAD: whether this rank runs the thread.  `setting` is
// auto, or a yes/no value; `ranks_on_node` counts the ranks on this host.
// auto says yes only where a CPU is to spare: this thread's affinity mask
// holds more CPUs than its share (bound: the whole mask; unbound: the
// node's CPUs divided among its ranks) needs for the application's threads
// (OMP_NUM_THREADS, else 1).  A thread on a busy CPU would only add
// scheduler hand-overs (docs/design.md, "The analysis thread").  `why`
// explains the choice; `bad` is set for an unknown setting (then auto).
struct ThreadChoice {
  bool on = false;
  bool bad = false;
  std::string why;
};
ThreadChoice choose_analysis_thread(const std::string& setting, int ranks_on_node);

class AnalysisThread {
 public:
  AnalysisThread() = default;
  AnalysisThread(const AnalysisThread&) = delete;
  AnalysisThread& operator=(const AnalysisThread&) = delete;
  ~AnalysisThread() { stop(); }

  // MPI thread, before the pipeline starts: starts the thread and hands it
  // the scheduler's local work.  False (with the scheduler left to the MPI
  // thread alone) if no thread could be created.
  bool start(analysis::Scheduler& sched);
  // MPI thread (MPI_Finalize) or the exiting thread (exit without
  // MPI_Finalize): ends the thread after its current slice.  Idempotent.
  void stop();
  bool running() const { return thread_.joinable(); }

 private:
  void run();

  analysis::Scheduler* sched_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace onlinews::rt
