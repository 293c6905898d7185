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
    d.on_event(Phase::Forward, EventKind::CollStart, this, &CollectiveCounts::on_start);
    d.on_event(Phase::Forward, EventKind::CollComplete, this, &CollectiveCounts::on_complete);
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
    count(ctx, e.bytes_out(), e.bytes_in());
  }
  // A nonblocking (or neighborhood) instance: counted at its start, where
  // its data leaves; the bytes it receives at its completion.
  void on_start(const Event& e, ReplayContext& ctx) {
    count(ctx, e.bytes, (e.flags & evflag::kCollReceives) != 0 ? 1 : 0, false);
  }
  void on_complete(const Event& e, ReplayContext& ctx) {
    ctx.add_inclusive(Metric::bytes_cin, static_cast<double>(e.bytes));
  }
  static void count(ReplayContext& ctx, std::uint64_t out, std::uint64_t in, bool bytes_in = true) {
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
    if (bytes_in) ctx.add_inclusive(Metric::bytes_cin, static_cast<double>(in));
  }
};

}  // namespace

std::unique_ptr<Pattern> make_collective_counts() { return std::make_unique<CollectiveCounts>(); }

}  // namespace onlinews::analysis
