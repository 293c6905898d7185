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
    count(ctx, e.bytes_out() > 0, e.bytes_in() > 0);
    ctx.add_inclusive(Metric::bytes_cout, static_cast<double>(e.bytes_out()));
    ctx.add_inclusive(Metric::bytes_cin, static_cast<double>(e.bytes_in()));
  }
  // A nonblocking (or neighborhood) instance: counted at its start, where
  // its data leaves; the bytes it receives at its completion.
  void on_start(const Event& e, ReplayContext& ctx) {
    count(ctx, e.bytes > 0, (e.flags & evflag::kCollReceives) != 0);
    ctx.add_inclusive(Metric::bytes_cout, static_cast<double>(e.bytes));
  }
  void on_complete(const Event& e, ReplayContext& ctx) {
    ctx.add_inclusive(Metric::bytes_cin, static_cast<double>(e.bytes));
  }
  static void count(ReplayContext& ctx, bool sends, bool receives) {
    ctx.add_inclusive(sends && receives ? Metric::comms_cxch
                      : sends           ? Metric::comms_csrc
                      : receives        ? Metric::comms_cdst
                                        : Metric::syncs_coll,
                      1.0);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_collective_counts() { return std::make_unique<CollectiveCounts>(); }

}  // namespace onlinews::analysis
