// mpi_rma_early_wait and mpi_rma_late_complete (seed 001, Figure 3): a
// target's MPI_Win_wait (or the MPI_Win_test that succeeded) cannot return
// before every origin of its exposure epoch entered MPI_Win_complete:
//   early wait    = max(0, min(latest complete enter, wait leave) - wait enter)
// and of that, the part after the latest RMA operation on this window had
// already left (the origins could have completed earlier):
//   late complete = max(0, min(latest complete enter, wait leave)
//                          - max(latest operation leave, wait enter))
// (an origin without an operation counts from its MPI_Win_start's leave).
// Charged at the epoch's end, when the origins' times came (rma_accesses.cpp).
#include <algorithm>

#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaEarlyWait final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_epoch_end(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const ExposureEpochResult& x : ctx.rma_epochs()->exposure) {
      if (x.latest_complete <= x.wait_enter) continue;
      const std::int64_t until = std::min(x.latest_complete, x.wait_leave);
      ctx.add_at(Metric::mpi_rma_early_wait, x.location, x.wait_cp, secs(until - x.wait_enter));
      const std::int64_t from = std::max(x.latest_access, x.wait_enter);
      if (until > from) ctx.add_at(Metric::mpi_rma_late_complete, x.location, x.wait_cp, secs(until - from));
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_early_wait() { return std::make_unique<RmaEarlyWait>(); }

}  // namespace onlinews::analysis
