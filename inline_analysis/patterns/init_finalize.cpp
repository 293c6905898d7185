// mpi_init_completion and mpi_finalize_wait (the MPI_Init and MPI_Finalize
// pseudo-collectives on MPI_COMM_WORLD).  With L = min(latest enter, own
// leave):
//   init completion = max(0, own leave - max(earliest leave, L))
//   finalize wait   = max(0, L - own enter)
// No wait is charged at MPI_Init: nothing the application did before it
// could have caused it.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class InitFinalize final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &InitFinalize::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    // Both only bound synchronization intervals: a Wait at Finalize has no
    // delay costs (as in Scalasca, docs/analyses.md), so neither is `delayed`.
    if (v.load(e, ctx, CollKind::Init)) {
      ctx.add(Metric::mpi_init_completion, v.completion());
      publish_collective(ctx, v, Metric::mpi_init_completion, 0.0, DelayKind::NxN,
                         v.comm_rank_of_world(v.all->max_enter_rank), false);
    } else if (v.load(e, ctx, CollKind::Finalize)) {
      publish_collective(ctx, v, Metric::mpi_finalize_wait, v.wait_for(v.all->max_enter), DelayKind::NxN,
                         v.comm_rank_of_world(v.all->max_enter_rank), false);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_init_finalize() { return std::make_unique<InitFinalize>(); }

}  // namespace onlinews::analysis
