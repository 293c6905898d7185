// mpi_latesender_wo (mpi_lswo_same / mpi_lswo_different): a Late Sender
// instance is re-labelled Wrong Order when a later receive gets a message
// that was sent *before* the message the instance waited for -- receiving
// that one first would have avoided the wait.  The last 100 instances per
// location are kept (as in Scalasca), across epochs.  "same" means the
// earlier message came from the same rank as the late one.
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
    auto& ring = rings_[ctx.location()];
    for (auto it = ring.begin(); it != ring.end();) {
      if (it->send_enter > s->enter) {
        const Metric m = it->sender == s->src ? Metric::mpi_lswo_same : Metric::mpi_lswo_different;
        ctx.add_at(m, it->location, it->callpath, it->wait);
        ctx.add_at(Metric::mpi_latesender_wo, it->location, it->callpath, it->wait);
        ctx.add_at(it->bytes == 0 ? Metric::mpi_slswo_count : Metric::mpi_clswo_count, it->location,
                   it->callpath, 1.0);
        it = ring.erase(it);
      } else {
        ++it;
      }
    }
  }
  void on_late_sender(const LateSenderFinding& f, ReplayContext&) {
    auto& ring = rings_[f.location];
    ring.push_back(f);
    if (ring.size() > kRing) ring.pop_front();
  }

  std::unordered_map<int, std::deque<LateSenderFinding>> rings_;  // per location
};

}  // namespace

std::unique_ptr<Pattern> make_wrong_order() { return std::make_unique<WrongOrder>(); }

}  // namespace onlinews::analysis
