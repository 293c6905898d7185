// mpi_rma_wait_at_fence (MPI_Win_fence), seed 001 §4: a fence need not
// synchronize (assertions such as MPI_MODE_NOPRECEDE, or an implementation
// that knows no access is pending), so an instance counts as synchronizing
// only if every member entered it before any member left it:
//   latest enter <= earliest leave.
// Then every member waits for the last one to enter:
//   wait = max(0, min(latest enter, own leave) - own enter)
// and the last member to enter caused the waits (delay_rma_fence; the Early
// Fence share of each member's wait, rma_early_fence.cpp, is charged as
// delay_rma_earlyfence: the origin whose access ended last most often
// entered last too, and a wait is explained once).  A fence
// that did not synchronize is no synchronization point: nobody waited, and
// the critical path does not pass between ranks there.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaWaitAtFence final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaWaitAtFence::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::Fence)) return;
    const bool synchronizing = v.all->max_enter <= v.all->min_leave;
    const double wait = synchronizing ? v.wait_for(v.all->max_enter) : 0.0;
    const double early = early_fence_wait(v, *ctx.collective());
    publish_collective(ctx, v, Metric::mpi_rma_wait_at_fence, wait, DelayKind::RmaFence,
                       v.comm_rank_of_world(v.all->max_enter_rank),
                       synchronizing && v.all->min_enter < v.all->max_enter, wait > 0 ? early / wait : 0.0,
                       DelayKind::RmaEarlyFence);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_wait_at_fence() { return std::make_unique<RmaWaitAtFence>(); }

}  // namespace onlinews::analysis
