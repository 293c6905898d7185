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
    if (!v.load(e, ctx, CollKind::NToOne)) return;
    const bool receives = v.all->root_bytes > 0;
    // The root waits for the latest sender.
    const int latest = v.comm_rank_of_world(v.all->max_sender_rank);
    publish_collective(ctx, v, Metric::mpi_earlyreduce,
                       v.root && receives ? v.wait_for(v.all->max_sender_enter) : 0.0, DelayKind::NToOne, latest,
                       receives && latest >= 0 && v.all->root_enter < v.all->max_sender_enter);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_early_reduce() { return std::make_unique<EarlyReduce>(); }

}  // namespace onlinews::analysis
