// mpi_rma_wait_for_progress: a lock, flush or unlock that waited for its
// target to enter MPI (or onlinews' own work, which calls MPI too), with no
// other origin's lock to explain it (rma_locks.cpp): from the call's enter
// to that entry.  Libraries that acquire locks and complete accesses with
// the target's help (Open MPI's osc/pt2pt) show it; RDMA and shared-memory
// windows do not.  Charged in the epoch the target's answer came.
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaWaitForProgress final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_rma_epochs(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const LockCallResult& c : ctx.rma_epochs()->lock_calls) {
      if (c.progress > 0 && !c.operation) ctx.add_at(Metric::mpi_rma_wait_for_progress, c.location, c.call.callpath, c.progress);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_wait_for_progress() { return std::make_unique<RmaWaitForProgress>(); }

}  // namespace onlinews::analysis
