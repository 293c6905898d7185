// RMA operation counts and bytes, on the origin: puts (Put, Rput, Accumulate,
// Raccumulate), gets (Get, Rget) and atomics (Get_accumulate,
// Rget_accumulate, Fetch_and_op, Compare_and_swap), and the bytes each moved
// to its target (bytes_put) and fetched from it (bytes_get).
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaCounts final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::RmaPut, this, &RmaCounts::on_put);
    d.on_event(Phase::Forward, EventKind::RmaGet, this, &RmaCounts::on_get);
    d.on_event(Phase::Forward, EventKind::RmaAtomic, this, &RmaCounts::on_atomic);
  }

 private:
  static void count(const Event& e, ReplayContext& ctx, Metric m) {
    ctx.add_inclusive(m, 1.0);
    if (e.bytes_out() > 0) ctx.add_inclusive(Metric::bytes_put, static_cast<double>(e.bytes_out()));
    if (e.bytes_in() > 0) ctx.add_inclusive(Metric::bytes_get, static_cast<double>(e.bytes_in()));
  }
  void on_put(const Event& e, ReplayContext& ctx) { count(e, ctx, Metric::comms_rma_puts); }
  void on_get(const Event& e, ReplayContext& ctx) { count(e, ctx, Metric::comms_rma_gets); }
  void on_atomic(const Event& e, ReplayContext& ctx) { count(e, ctx, Metric::comms_rma_atomics); }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_counts() { return std::make_unique<RmaCounts>(); }

}  // namespace onlinews::analysis
