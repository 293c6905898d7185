// mpi_rma_early_fence (seed 001, Figure 4): the part of a Wait at Fence in
// which the target waited for RMA operations on its window to finish, from
// its own fence enter to the leave of the latest operation any origin
// issued on it in the closing epoch (exchanged by rma_accesses.cpp):
//   early = min(wait at fence, max(0, min(latest access leave, own leave) - own enter))
// Its delay costs: rma_wait_at_fence.cpp.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaEarlyFence final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaEarlyFence::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::Fence)) return;
    const double early = early_fence_wait(v, *ctx.collective());
    if (early > 0) ctx.add(Metric::mpi_rma_early_fence, early);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_early_fence() { return std::make_unique<RmaEarlyFence>(); }

}  // namespace onlinews::analysis
