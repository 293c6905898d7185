// Point-to-point counts and bytes: a zero-byte message is a synchronization
// (syncs_send / syncs_recv), any other a communication (comms_send /
// comms_recv); bytes_sent at the sending call, bytes_rcvd at the call that
// completes the receive (sized by the matched send).
#include "../callpath_sums.hpp"
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
  // Summed per (location, call path) and added to the profile once per
  // epoch (callpath_sums.hpp), in this order:
  static constexpr Metric kMetrics[] = {Metric::syncs_send, Metric::comms_send, Metric::bytes_sent,
                                        Metric::syncs_recv, Metric::comms_recv, Metric::bytes_rcvd};
  void on_send(const Event& e, ReplayContext& ctx) {
    double* v = sums_.at(ctx.location(), ctx.callpath());
    v[e.bytes == 0 ? 0 : 1] += 1.0;
    v[2] += static_cast<double>(e.bytes);
  }
  void on_receive(const Event&, ReplayContext& ctx) {
    const SendRecord* s = ctx.matched_send();
    if (s == nullptr) return;
    double* v = sums_.at(ctx.location(), ctx.callpath());
    v[s->bytes == 0 ? 3 : 4] += 1.0;
    v[5] += static_cast<double>(s->bytes);
  }
  void on_walks_done(ReplayContext& ctx) override {
    sums_.flush([&](int loc, std::uint32_t cp, const double* v) {
      for (int i = 0; i < 6; ++i) ctx.add_inclusive_at(kMetrics[i], loc, cp, v[i]);
    });
  }
  CallpathSums<double, 6> sums_;
};

}  // namespace

std::unique_ptr<Pattern> make_message_counts() { return std::make_unique<MessageCounts>(); }

}  // namespace onlinews::analysis
