// mpi_rma_sync_lock_competition and mpi_rma_comm_lock_competition: a call of
// a passive-target epoch (lock, flush, unlock; or an RMA operation where the
// library acquires the lock lazily) that waited for a lock another origin
// held on the target, until that origin's release (rma_locks.cpp).  Charged
// in the epoch the target's answer came.  The wait is a synchronization
// point whose cause is the holder's MPI_Win_unlock (delay_rma_lockcompetition).
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaLockCompetition final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_rma_epochs(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const LockCallResult& c : ctx.rma_epochs()->lock_calls) {
      if (c.competition <= 0) continue;
      const Metric m = c.operation ? Metric::mpi_rma_comm_lock_competition : Metric::mpi_rma_sync_lock_competition;
      ctx.add_at(m, c.location, c.call.callpath, c.competition);
      PairSyncFinding f;
      f.location = c.location;
      f.waiting = c.call.at;
      f.cause = c.released_by;
      f.wait = c.competition;
      f.delay = DelayKind::RmaLockCompetition;
      // The wait ended when the holder's unlock returned, unless the lock
      // was granted before that (the unlock's enter is the moment then).
      f.at_cause_leave = c.released_in_call;
      ctx.publish(f);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_lock_competition() { return std::make_unique<RmaLockCompetition>(); }

}  // namespace onlinews::analysis
