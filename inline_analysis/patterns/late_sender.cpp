// mpi_latesender: a receive waits for a send that starts late.
//   wait = min(send enter, receiving call's leave) - receiving call's enter
// for blocking receives, Sendrecv and Wait*-completed receives; receives
// completed by Test* are not waits.  A call completing several receives
// (Waitall, Waitsome) counts once, with its largest wait.  Probes (Probe,
// Mprobe, successful Iprobe/Improbe, whose polling loop is one visit) wait
// the same way for the send of the message they probed; the receive of a
// probed message then has no Late Sender (seed 004 §3.3).  A send that
// starts after the receive returned is no wait (a broken pairing).
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class LateSender final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Recv, this, &LateSender::on_receive);
    d.on_event(Phase::Forward, EventKind::RecvComplete, this, &LateSender::on_receive);
    d.on_event(Phase::Forward, EventKind::Probe, this, &LateSender::on_receive);
    d.on_event(Phase::Forward, EventKind::Leave, this, &LateSender::on_leave);
  }

 private:
  void on_receive(const Event& e, ReplayContext& ctx) {
    if ((e.flags & evflag::kByTest) != 0 || ctx.probed()) return;
    const SendRecord* s = ctx.matched_send();
    if (s == nullptr || ctx.region_leave() == kOpen || s->enter <= ctx.region_enter()) return;
    // A send that started after the receive returned cannot be its message
    // (a pairing broken by lost events): no wait, and no message against
    // time in the backward replay, which would then wait for itself.
    if (s->enter > ctx.region_leave()) return;
    const double w = secs(std::min(s->enter, ctx.region_leave()) - ctx.region_enter());
    Current& cur = cur_[ctx.location()];
    if (!cur.valid || cur.frame != ctx.frame()) cur = Current{};
    if (w > cur.finding.wait) {
      cur.valid = true;
      cur.frame = ctx.frame();
      cur.finding = {ctx.location(), ctx.callpath(), ctx.frame(), w, s->src, s->enter, s->bytes,
                      ctx.index(), s->seq, s->epoch == static_cast<std::uint32_t>(ctx.epoch()), s->epoch};
    }
  }
  void on_leave(const Event&, ReplayContext& ctx) {
    Current& cur = cur_[ctx.location()];
    if (!cur.valid || cur.frame != ctx.frame()) return;
    const LateSenderFinding& f = cur.finding;
    ctx.add(Metric::mpi_latesender, f.wait);
    ctx.add(f.bytes == 0 ? Metric::mpi_sls_count : Metric::mpi_cls_count, 1.0);
    ctx.publish(f);
    cur = Current{};
  }

  // The call being walked, per thread (calls of several threads interleave
  // in the MPI view under MPI_THREAD_MULTIPLE).
  struct Current {
    bool valid = false;
    std::uint32_t frame = 0;
    LateSenderFinding finding{};
  };
  PerLocation<Current> cur_;
};

}  // namespace

std::unique_ptr<Pattern> make_late_sender() { return std::make_unique<LateSender>(); }

}  // namespace onlinews::analysis
