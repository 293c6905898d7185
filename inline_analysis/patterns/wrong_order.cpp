// mpi_latesender_wo (mpi_lswo_same / mpi_lswo_different): a Late Sender
// instance is re-labelled Wrong Order when a later receive gets a message
// that was sent *before* the message the instance waited for -- receiving
// that one first would have avoided the wait.  The last 100 instances per
// location are kept (as in Scalasca), across epochs.  "same" means the
// earlier message came from the same rank as the late one.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

constexpr std::size_t kRing = 100;

class WrongOrder final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Recv, this, &WrongOrder::on_receive);
    d.on_event(Phase::Forward, EventKind::RecvComplete, this, &WrongOrder::on_receive);
    d.on_finding<LateSenderFinding>(this, &WrongOrder::on_late_sender);
  }

 private:
  void on_receive(const Event&, ReplayContext& ctx) {
    const SendRecord* s = ctx.matched_send();
    if (s == nullptr) return;
    Ring& ring = rings_[ctx.location()];
    // Messages mostly arrive in the order they were sent: then no kept
    // instance's send is later than this one, and the scan is skipped.
    if (ring.latest_send <= s->enter) return;
    ring.latest_send = kNone;
    for (auto it = ring.list.begin(); it != ring.list.end();) {
      if (it->send_enter > s->enter) {
        const Metric m = it->sender == s->src ? Metric::mpi_lswo_same : Metric::mpi_lswo_different;
        ctx.add_at(m, it->location, it->callpath, it->wait);
        ctx.add_at(Metric::mpi_latesender_wo, it->location, it->callpath, it->wait);
        ctx.add_at(it->bytes == 0 ? Metric::mpi_slswo_count : Metric::mpi_clswo_count, it->location,
                   it->callpath, 1.0);
        it = ring.list.erase(it);
      } else {
        ring.latest_send = std::max(ring.latest_send, it->send_enter);
        ++it;
      }
    }
  }
  void on_late_sender(const LateSenderFinding& f, ReplayContext&) {
    Ring& ring = rings_[f.location];
    ring.list.push_back(f);
    ring.latest_send = std::max(ring.latest_send, f.send_enter);
    if (ring.list.size() <= kRing) return;
    const std::int64_t gone = ring.list.front().send_enter;
    ring.list.pop_front();
    if (gone < ring.latest_send) return;
    ring.latest_send = kNone;
    for (const LateSenderFinding& k : ring.list) ring.latest_send = std::max(ring.latest_send, k.send_enter);
  }

  static constexpr std::int64_t kNone = INT64_MIN;
  struct Ring {
    std::deque<LateSenderFinding> list;
    std::int64_t latest_send = kNone;  // the latest send_enter in `list`
  };
  std::unordered_map<int, Ring> rings_;  // per location
};

}  // namespace

std::unique_ptr<Pattern> make_wrong_order() { return std::make_unique<WrongOrder>(); }

}  // namespace onlinews::analysis
