// mpi_barrier_wait and mpi_barrier_completion (MPI_Barrier):
//   wait       = max(0, min(latest enter, own leave) - own enter)
//   completion = max(0, own leave - max(earliest leave, min(latest enter, own leave)))
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class Barrier final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &Barrier::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::Barrier)) return;
    // Everybody waits for the latest to enter.
    publish_collective(ctx, v, Metric::mpi_barrier_wait, v.wait_for(v.all->max_enter), DelayKind::Barrier,
                       v.comm_rank_of_world(v.all->max_enter_rank), v.all->min_enter < v.all->max_enter);
    ctx.add(Metric::mpi_barrier_completion, v.completion());
  }
};

}  // namespace

std::unique_ptr<Pattern> make_barrier() { return std::make_unique<Barrier>(); }

}  // namespace onlinews::analysis
