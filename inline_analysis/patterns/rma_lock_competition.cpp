// mpi_rma_sync_lock_competition and mpi_rma_comm_lock_competition: a call of
// a passive-target epoch (lock, flush, unlock; or an RMA operation where the
// library acquires the lock lazily) that waited for a lock another origin
// held on the target, until that origin's release (rma_locks.cpp).  Charged
// at the epoch's end, when the target's answer came.
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaLockCompetition final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_epoch_end(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const LockCallResult& c : ctx.rma_epochs()->lock_calls) {
      if (c.competition <= 0) continue;
      const Metric m = c.operation ? Metric::mpi_rma_comm_lock_competition : Metric::mpi_rma_sync_lock_competition;
      ctx.add_at(m, c.location, c.callpath, c.competition);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_lock_competition() { return std::make_unique<RmaLockCompetition>(); }

}  // namespace onlinews::analysis
