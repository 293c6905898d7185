// mpi_latebroadcast (Bcast, Scatter, Scatterv): a non-root rank that receives
// data waits for the root to enter:
//   wait = max(0, min(root enter, own leave) - own enter)
// Instances in which the root sends nothing are not analyzed.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class LateBroadcast final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &LateBroadcast::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::OneToN)) return;
    const bool sends = v.all->root_bytes > 0;
    const bool waits = !v.root && v.bytes_in != 0 && sends;
    // Every receiver waits for the root.
    publish_collective(ctx, v, Metric::mpi_latebroadcast, waits ? v.wait_for(v.all->root_enter) : 0.0,
                       DelayKind::OneToN, e.root(), sends && v.all->min_enter < v.all->root_enter);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_late_broadcast() { return std::make_unique<LateBroadcast>(); }

}  // namespace onlinews::analysis
