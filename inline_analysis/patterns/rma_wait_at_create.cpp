// mpi_rma_wait_at_create (MPI_Win_create, _allocate, _allocate_shared,
// _create_dynamic): creating a window is collective over its communicator and
// synchronizes like a barrier in the MPI libraries we know (seed 001 §3), so
// every member waits for the last one to enter:
//   wait = max(0, min(latest enter, own leave) - own enter)
// The last member to enter caused the waits (delay_rma_window).
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaWaitAtCreate final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaWaitAtCreate::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::WinCreate)) return;
    publish_collective(ctx, v, Metric::mpi_rma_wait_at_create, v.wait_for(v.all->max_enter), DelayKind::RmaWindow,
                       v.comm_rank_of_world(v.all->max_enter_rank), v.all->min_enter < v.all->max_enter);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_wait_at_create() { return std::make_unique<RmaWaitAtCreate>(); }

}  // namespace onlinews::analysis
