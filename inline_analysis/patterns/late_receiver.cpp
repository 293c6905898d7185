// mpi_latereceiver (backward replay): a synchronizing send waits for its
// receive to be posted.  A send synchronizes when it is synchronous-mode, or
// standard-mode and larger than the eager limit to its destination
// (docs/analyses.md).  The waiting call is the blocking MPI_Send/MPI_Ssend or
// the Wait* completing the send request:
//   wait = receive-post enter - completing call's enter,
// if the call was still running when the receive was posted.  A Waitall or
// Waitsome counts once, with its largest wait, and not at all if it was
// already a Late Sender (the receive side explains that call's time).
// A message that crosses a requested cut is analyzed in the window where
// the receiver's reply and the completion meet: the Wait there, or the
// Leave of a blocking send whose call was open at the cut (matching.cpp
// links them; the call's Enter lies before the window).
#include <algorithm>
#include <vector>

#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class LateReceiver final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_finding<LateSenderFinding>(this, &LateReceiver::on_late_sender);
    d.on_linked_event(Phase::Backward, EventKind::Send, this, &LateReceiver::on_send);
    d.on_linked_event(Phase::Backward, EventKind::SendComplete, this, &LateReceiver::on_send);
    d.on_linked_event(Phase::Backward, EventKind::Leave, this, &LateReceiver::on_send);
    d.on_event(Phase::Backward, EventKind::Enter, this, &LateReceiver::on_enter);
  }
  void on_epoch_end(ReplayContext&) override { late_sender_calls_.clear(); }

 private:
  struct Current;
  static std::uint64_t key(int location, std::uint32_t frame) {
    return (static_cast<std::uint64_t>(location) << 32) | frame;
  }
  void on_late_sender(const LateSenderFinding& f, ReplayContext&) {
    late_sender_calls_.push_back(key(f.location, f.frame));
    sorted_ = false;
  }
  void on_send(const Event& e, ReplayContext& ctx) {
    const ReplyRecord* r = ctx.reply();
    if (r == nullptr || (r->flags & sendflag::kSynchronous) == 0) return;
    if (e.kind != EventKind::SendComplete && (r->flags & sendflag::kBlocking) == 0) return;
    if ((e.flags & evflag::kByTest) != 0) return;
    const RegionDef* reg = ctx.region();
    if (reg == nullptr) return;
    const bool multi = (reg->attrs & region_attr::kMultiCompletion) != 0;
    if (multi && late_sender_call(key(ctx.location(), ctx.frame()))) return;
    const std::int64_t enter = ctx.region_enter(), leave = ctx.region_leave();
    if (leave == kOpen || leave <= r->post_enter || r->post_enter <= enter) return;
    const double w = secs(r->post_enter - enter);
    Current& cur = cur_[ctx.location()];
    if (!cur.valid || cur.frame != ctx.frame()) cur = Current{};
    if (w > cur.finding.wait) {
      cur.valid = true;
      cur.frame = ctx.frame();
      cur.finding = {ctx.location(), ctx.callpath(), ctx.frame(), w, r->receiver, r->bytes, ctx.index(), r->seq,
                      r->epoch};
    }
  }
  bool late_sender_call(std::uint64_t k) {
    if (!sorted_) {
      std::sort(late_sender_calls_.begin(), late_sender_calls_.end());
      sorted_ = true;
    }
    return std::binary_search(late_sender_calls_.begin(), late_sender_calls_.end(), k);
  }
  // Walking backward, a call's Enter comes after all its events.
  void on_enter(const Event&, ReplayContext& ctx) {
    Current& cur = cur_[ctx.location()];
    if (cur.valid && cur.frame == ctx.frame()) emit(ctx, cur);
  }
  // A call entered before the window: its events were walked last.
  void on_backward_done(ReplayContext& ctx) override {
    for (Current& cur : cur_) {
      if (cur.valid) emit(ctx, cur);
    }
  }
  void emit(ReplayContext& ctx, Current& cur) {
    const LateReceiverFinding& f = cur.finding;
    ctx.add_at(Metric::mpi_latereceiver, f.location, f.callpath, f.wait);
    ctx.add_at(f.bytes == 0 ? Metric::mpi_slr_count : Metric::mpi_clr_count, f.location, f.callpath, 1.0);
    ctx.publish(f);
    cur = Current{};
  }

  // Calls with a Late Sender: appended in the forward walk, sorted at the
  // first lookup after (a std::set made a heap node per Late Sender).
  std::vector<std::uint64_t> late_sender_calls_;
  bool sorted_ = true;
  // The call being walked, per thread (calls of several threads interleave
  // in the MPI view under MPI_THREAD_MULTIPLE).
  struct Current {
    bool valid = false;
    std::uint32_t frame = 0;
    LateReceiverFinding finding{};
  };
  PerLocation<Current> cur_;
};

}  // namespace

std::unique_ptr<Pattern> make_late_receiver() { return std::make_unique<LateReceiver>(); }

}  // namespace onlinews::analysis
