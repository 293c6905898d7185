// mpi_rma_sync_late_post and mpi_rma_comm_late_post (seed 001, Figure 1):
// an origin's access epoch blocks until its targets have posted their
// exposure epochs.  Where it blocks depends on the MPI library, so, as in the
// seed, a call is taken to have blocked if the latest target's post entered
// during it:
//   in MPI_Win_start:     wait = latest post - start enter
//   else in MPI_Win_complete: wait = latest post - complete enter
// and an RMA operation (seed 001's Early Transfer) blocked if its own
// target's post entered during it: wait = post - operation enter.  A call
// wrongly taken to have blocked lasted only as long as the "wait" it is
// charged, so the error is small (seed 001 §4).  Charged at the epoch's end,
// when the targets' times came (rma_accesses.cpp).
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaLatePost final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_epoch_end(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const AccessEpochResult& a : ctx.rma_epochs()->access) {
      const std::int64_t p = a.latest_post;
      if (p > a.start_enter && p <= a.start_leave) {
        ctx.add_at(Metric::mpi_rma_sync_late_post, a.location, a.start_cp, secs(p - a.start_enter));
      } else if (p > a.complete_enter && p <= a.complete_leave) {
        ctx.add_at(Metric::mpi_rma_sync_late_post, a.location, a.complete_cp, secs(p - a.complete_enter));
      }
      for (const AccessEpochResult::Op& op : a.ops) {
        if (op.post > op.enter && op.post <= op.leave) {
          ctx.add_at(Metric::mpi_rma_comm_late_post, a.location, op.callpath, secs(op.post - op.enter));
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_late_post() { return std::make_unique<RmaLatePost>(); }

}  // namespace onlinews::analysis
