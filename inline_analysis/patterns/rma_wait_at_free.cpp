// mpi_rma_wait_at_free (MPI_Win_free): collective over the window's group; a
// member may not free the window before every origin finished its accesses,
// so it waits for the last member to enter:
//   wait = max(0, min(latest enter, own leave) - own enter)
// The last member to enter caused the waits (delay_rma_window).
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaWaitAtFree final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaWaitAtFree::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::WinFree)) return;
    publish_collective(ctx, v, Metric::mpi_rma_wait_at_free, v.wait_for(v.all->max_enter), DelayKind::RmaWindow,
                       v.comm_rank_of_world(v.all->max_enter_rank), v.all->min_enter < v.all->max_enter);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_wait_at_free() { return std::make_unique<RmaWaitAtFree>(); }

}  // namespace onlinews::analysis
