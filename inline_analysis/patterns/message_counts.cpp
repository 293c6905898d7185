// Point-to-point counts and bytes: a zero-byte message is a synchronization
// (syncs_send / syncs_recv), any other a communication (comms_send /
// comms_recv); bytes_sent at the sending call, bytes_rcvd at the call that
// completes the receive (sized by the matched send).
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class MessageCounts final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Send, this, &MessageCounts::on_send);
    d.on_event(Phase::Forward, EventKind::SendRequest, this, &MessageCounts::on_send);
    d.on_event(Phase::Forward, EventKind::Recv, this, &MessageCounts::on_receive);
    d.on_event(Phase::Forward, EventKind::RecvComplete, this, &MessageCounts::on_receive);
  }

 private:
  void on_send(const Event& e, ReplayContext& ctx) {
    ctx.add_inclusive(e.bytes == 0 ? Metric::syncs_send : Metric::comms_send, 1.0);
    ctx.add_inclusive(Metric::bytes_sent, static_cast<double>(e.bytes));
  }
  void on_receive(const Event&, ReplayContext& ctx) {
    const SendRecord* s = ctx.matched_send();
    if (s == nullptr) return;
    ctx.add_inclusive(s->bytes == 0 ? Metric::syncs_recv : Metric::comms_recv, 1.0);
    ctx.add_inclusive(Metric::bytes_rcvd, static_cast<double>(s->bytes));
  }
};

}  // namespace

std::unique_ptr<Pattern> make_message_counts() { return std::make_unique<MessageCounts>(); }

}  // namespace onlinews::analysis
