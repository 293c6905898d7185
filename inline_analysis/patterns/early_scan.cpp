// mpi_earlyscan (Scan, Exscan): rank i waits for the latest of the ranks
// 0..i that send data (an inclusive prefix maximum of their enters):
//   wait = max(0, min(latest enter among ranks <= i, own leave) - own enter)
#include "collective_view.hpp"

namespace onlinews::analysis {
namespace {

class EarlyScan final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &EarlyScan::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    CollectiveView v;
    if (!v.load(e, ctx, CollKind::Scan) && !v.load(e, ctx, CollKind::Exscan)) return;
    publish_prefix(ctx, v, Metric::mpi_earlyscan, v.wait_for(v.prefix->max_enter), v.prefix->rank);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_early_scan() { return std::make_unique<EarlyScan>(); }

}  // namespace onlinews::analysis
