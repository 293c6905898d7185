// mpi_rma_wait_at_create (MPI_Win_create, _allocate, _allocate_shared,
// _create_dynamic) and mpi_rma_wait_at_free (MPI_Win_free): both are
// collective over the window's group and synchronize like a barrier --
// MPI_Win_free must (no member may free the window before every origin
// finished its accesses), creation does in the libraries we know (seed 001
// §3) -- so every member waits for the last one to enter:
//   wait = max(0, min(latest enter, own leave) - own enter)
// The last member to enter caused the waits (delay_rma_window).  One
// pattern, registered once per kind.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class RmaWindowWait final : public Pattern {
 public:
  RmaWindowWait(CollKind kind, Metric metric) : kind_(kind), metric_(metric) {}
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &RmaWindowWait::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, kind_)) return;
    publish_collective(ctx, v, metric_, v.wait_for(v.all->max_enter), DelayKind::RmaWindow,
                       v.comm_rank_of_world(v.all->max_enter_rank), v.all->min_enter < v.all->max_enter);
  }
  CollKind kind_;
  Metric metric_;
};

}  // namespace

std::unique_ptr<Pattern> make_rma_wait_at_create() {
  return std::make_unique<RmaWindowWait>(CollKind::WinCreate, Metric::mpi_rma_wait_at_create);
}
std::unique_ptr<Pattern> make_rma_wait_at_free() {
  return std::make_unique<RmaWindowWait>(CollKind::WinFree, Metric::mpi_rma_wait_at_free);
}

}  // namespace onlinews::analysis
