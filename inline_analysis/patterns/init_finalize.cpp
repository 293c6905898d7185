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
    if (v.load(e, ctx, CollKind::Init)) {
      ctx.add(Metric::mpi_init_completion, v.completion());
    } else if (v.load(e, ctx, CollKind::Finalize)) {
      charge_collective_wait(ctx, Metric::mpi_finalize_wait, v.wait_for(v.all->max_enter), v.all->max_enter_rank);
    }
  }
};

}  // namespace

std::unique_ptr<Pattern> make_init_finalize() { return std::make_unique<InitFinalize>(); }

}  // namespace onlinews::analysis
