// mpi_rma_early_wait and mpi_rma_late_complete (seed 001, Figure 3): a
// target's MPI_Win_wait (or the MPI_Win_test that succeeded) cannot return
// before every origin of its exposure epoch entered MPI_Win_complete:
//   early wait    = max(0, min(latest complete enter, wait leave) - wait enter)
// and of that, the part after the latest RMA operation on this window had
// already left (the origins could have completed earlier):
//   late complete = max(0, min(latest complete enter, wait leave)
//                          - max(latest operation leave, wait enter))
// (an origin without an operation counts from its MPI_Win_start's leave).
// Charged in the epoch the origins' times came (rma_accesses.cpp).  The wait
// is a synchronization point whose cause is the latest origin's
// MPI_Win_complete (delay_rma_earlywait; its Late Complete share,
// delay_rma_latecomplete, is that share of its delay costs).
#include <algorithm>

#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaEarlyWait final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_rma_epochs(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const ExposureEpochResult& x : ctx.rma_epochs()->exposure) {
      if (x.latest_complete <= x.wait.enter) continue;
      const std::int64_t until = std::min(x.latest_complete, x.wait.leave);
      PairSyncFinding f;
      f.location = x.location;
      f.waiting = x.wait.at;
      f.cause = x.latest_complete_at;
      f.wait = secs(until - x.wait.enter);
      f.delay = DelayKind::RmaEarlyWait;
      f.part_delay = DelayKind::RmaLateComplete;
      ctx.add_at(Metric::mpi_rma_early_wait, x.location, x.wait.callpath, f.wait);
      const std::int64_t from = std::max(x.latest_access, x.wait.enter);
      if (until > from) {
        ctx.add_at(Metric::mpi_rma_late_complete, x.location, x.wait.callpath, secs(until - from));
        f.part = secs(until - from) / f.wait;
      }
      // A complete entered after the wait returned (clocks that disagree)
      // ended no wait: the wait is charged, not traced (nor paired).
      if (x.latest_complete > x.wait.leave) f.cause = EventRef{};
      ctx.publish(f);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_early_wait() { return std::make_unique<RmaEarlyWait>(); }

}  // namespace onlinews::analysis
