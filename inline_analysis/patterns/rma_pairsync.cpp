// mpi_rma_pairsync_count and mpi_rma_pairsync_unneeded_count (seed 001):
// a fence that closes an access epoch synchronizes the target with every
// member of the window, a potential origin each; those that did not access
// its window in the epoch (rma_accesses.cpp) were synchronized with for
// nothing.  Counted on the target, at its fence: N members, of which
// N - origins unneeded.  A fence with MPI_MODE_NOPRECEDE closes no epoch.
// An access epoch (start ... complete) synchronizes its origin with each
// target of its group: counted on the origin at MPI_Win_complete, unneeded
// for the targets it issued no operation to.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaPairsync final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaPairsync::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::Fence) || v.comm == nullptr) return;
    const CollResult* r = ctx.collective();
    if (!r->closes_epoch) return;
    const auto members = static_cast<double>(v.comm->size);
    const double needed = std::min(static_cast<double>(r->origins), members);
    // Inclusive values: the unneeded ones also count in their parents.
    ctx.add_inclusive(Metric::mpi_rma_pairsync_count, needed);
    ctx.add_inclusive(Metric::mpi_rma_pairsync_unneeded_count, members - needed);
  }

 public:
  void on_rma_epochs(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const AccessEpochResult& a : ctx.rma_epochs()->access) {
      ctx.add_inclusive_at(Metric::mpi_rma_pairsync_count, a.location, a.complete.callpath, a.accessed);
      ctx.add_inclusive_at(Metric::mpi_rma_pairsync_unneeded_count, a.location, a.complete.callpath,
                           a.targets - a.accessed);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_pairsync() { return std::make_unique<RmaPairsync>(); }

}  // namespace onlinews::analysis
