// ONLINEWS_TEST_REFERENCE (a test knob, config.hpp): after MPI_Finalize's
// epoch, the whole run is analyzed once more as one epoch from a copy of
// every window's events, and written like a regular result file.  Two
// executions of a program differ by more than the analysis' own error (on
// a loaded or oversubscribed machine, by the analysis' perturbation
// itself), so this is how the tests hold the epochs' results to the
// one-epoch (post-mortem) results of the same events: wait states, delay
// costs and the critical path across requested cuts, the long-term costs
// lost across them included.  Memory grows with the run: tests only.
#include "inline_analysis/task.hpp"
#include "mpi_transport.hpp"
#include "pipeline.hpp"
#include "state.hpp"

namespace onlinews::rt {

void write_reference(State& s) {
  if (s.cfg.test_reference.empty() || !s.pipeline || !s.pipeline->finished() || s.pipeline->failed()) return;
  ToolScope tool;
  std::vector<analysis::LocationWindow> windows = s.pipeline->take_reference();
  analysis::WindowBounds bounds;  // MPI_Init to MPI_Finalize: synchronized at both ends
  bounds.end = s.pipeline->last_boundary_time();
  // The run's analyzer and totals are done with (its file is complete); the
  // reference gets fresh ones and a file of its own.
  const std::unique_ptr<analysis::Analyzer> run_analyzer = std::move(s.analyzer);
  s.analyzer = std::make_unique<analysis::Analyzer>(s.analysis_defs, analysis_options(s.cfg));
  s.totals = EpochTotals{};
  s.locations.clear();
  s.location_column.clear();
  s.h5.reset();
  s.cfg.output = s.cfg.test_reference;
  open_output(s);

  analysis::Scheduler& sched = s.transport->scheduler();
  sched.enable_helper(false);
  analysis::EpochFacts facts;
  auto body = [&]() -> analysis::Task<> {
    facts = co_await s.analyzer->run_epoch(windows, *s.transport, bounds);
    co_await write_epoch_output(s, facts, 0.0, cutkind::kSync | cutkind::kFinal);
    co_await sched.finish();
  };
  analysis::Task<> task = body();
  sched.set_budget(std::chrono::nanoseconds(0));
  task.start();
  while (sched.where() != analysis::Where::Finished) sched.resume();
  const long verbose = s.cfg.verbose;
  s.cfg.verbose = 0;  // the run's summary is the one that counts
  finish_output(s);
  s.cfg.verbose = verbose;
  if (verbose >= 1 && s.rank == 0) {
    std::fprintf(stderr, "onlinews: the run analyzed as one epoch (ONLINEWS_TEST_REFERENCE): %s\n",
                 s.output_path.c_str());
  }
}

}  // namespace onlinews::rt
