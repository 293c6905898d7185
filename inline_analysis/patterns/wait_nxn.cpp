// mpi_wait_nxn and mpi_nxn_completion (Allreduce, Allgather(v), Alltoall(v/w),
// Reduce_scatter(_block)): as for the barrier, over all members; a rank that
// neither sends nor receives data in the instance is not analyzed.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class WaitNxN final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &WaitNxN::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::NxN)) return;
    const bool analyzed = v.bytes_out != 0 || v.bytes_in != 0;
    publish_collective(ctx, v, Metric::mpi_wait_nxn, analyzed ? v.wait_for(v.all->max_enter) : 0.0, DelayKind::NxN,
                       v.comm_rank_of_world(v.all->max_enter_rank), v.all->min_enter < v.all->max_enter);
    if (analyzed) ctx.add(Metric::mpi_nxn_completion, v.completion());
  }
};

}  // namespace

std::unique_ptr<Pattern> make_wait_nxn() { return std::make_unique<WaitNxN>(); }

}  // namespace onlinews::analysis
