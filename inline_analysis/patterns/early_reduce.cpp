// mpi_earlyreduce (Reduce, Gather, Gatherv): the root waits for the latest
// rank that sends data (DESIGN.md §6; Scalasca 2.x does the same):
//   wait = max(0, min(latest sender's enter, root leave) - root enter)
// Only the root is charged; instances in which the root receives nothing are
// not analyzed.
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class EarlyReduce final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &EarlyReduce::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::NToOne) || !v.root || v.all->root_bytes <= 0) return;
    charge_collective_wait(ctx, Metric::mpi_earlyreduce, v.wait_for(v.all->max_sender_enter),
                           v.all->max_sender_rank);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_early_reduce() { return std::make_unique<EarlyReduce>(); }

}  // namespace onlinews::analysis
