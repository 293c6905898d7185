// Collective counts and bytes: an instance that moves no data on this rank is
// a synchronization (syncs_coll); otherwise a communication as exchange
// (sends and receives), source (only sends) or destination (only receives).
// bytes_cout / bytes_cin are what the rank contributes and receives.
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class CollectiveCounts final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::CollectiveEnd, this, &CollectiveCounts::on_collective);
  }

 private:
  void on_collective(const Event& e, ReplayContext& ctx) {
    const RegionDef* r = ctx.region();
    // MPI_Init/Finalize and the window's collectives (creation, fence, free)
    // are not collective communication (RMA counts: rma_counts.cpp).
    switch (r != nullptr ? r->coll : CollKind::None) {
      case CollKind::None: case CollKind::Init: case CollKind::Finalize:
      case CollKind::WinCreate: case CollKind::WinFree: case CollKind::Fence:
        return;
      default:
        break;
    }
    const std::uint64_t out = e.bytes_out(), in = e.bytes_in();
    Metric m = Metric::syncs_coll;
    if (out > 0 && in > 0) {
      m = Metric::comms_cxch;
    } else if (out > 0) {
      m = Metric::comms_csrc;
    } else if (in > 0) {
      m = Metric::comms_cdst;
    }
    ctx.add_inclusive(m, 1.0);
    ctx.add_inclusive(Metric::bytes_cout, static_cast<double>(out));
    ctx.add_inclusive(Metric::bytes_cin, static_cast<double>(in));
  }
};

}  // namespace

std::unique_ptr<Pattern> make_collective_counts() { return std::make_unique<CollectiveCounts>(); }

}  // namespace onlinews::analysis
