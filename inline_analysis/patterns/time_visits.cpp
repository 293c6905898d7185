// time, visits and the time categories (execution, comp, mpi and its groups,
// onlinews_overhead): exclusive time of every call path, from the intervals
// between consecutive Enter/Leave events of each location.
#include <climits>
#include <unordered_map>

#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

Metric category(const RegionDef* r) {
  if (r == nullptr) return Metric::comp;
  switch (r->kind) {
    case RegionKind::Tool:
      return Metric::onlinews_overhead;
    case RegionKind::Mpi:
      switch (r->group) {
        case MpiGroup::P2P: return Metric::mpi_point2point;
        case MpiGroup::Collective: return Metric::mpi_collective;
        case MpiGroup::Barrier: return Metric::mpi_sync_collective;
        case MpiGroup::InitExit: return Metric::mpi_init_exit;
        case MpiGroup::CommMgmt: return Metric::mpi_mgmt_comm;
        default: return Metric::mpi;
      }
    default:
      return Metric::comp;
  }
}

class TimeVisits final : public Pattern {
 public:
  void subscribe(Dispatch& d) override {
    d.on_event(Phase::Forward, EventKind::Enter, this, &TimeVisits::on_enter);
    d.on_event(Phase::Forward, EventKind::Leave, this, &TimeVisits::on_leave);
  }

 private:
  // Time since the location's previous Enter/Leave belongs to `cp`.
  void charge(ReplayContext& ctx, std::uint32_t cp, std::int64_t now) {
    auto it = last_.try_emplace(ctx.location(), kNever).first;
    std::int64_t& last = it->second;
    if (cp != kNoCallpath && last != kNever && now > last) {
      const RegionDef* r = ctx.defs().region(ctx.callpaths().node(cp).region);
      ctx.add_inclusive_at(category(r), ctx.location(), cp, secs(now - last));
    }
    last = now;
  }
  void on_enter(const Event& e, ReplayContext& ctx) {
    charge(ctx, ctx.callpaths().node(ctx.callpath()).parent, static_cast<std::int64_t>(e.time));
    ctx.add(Metric::visits, 1.0);
  }
  void on_leave(const Event& e, ReplayContext& ctx) {
    charge(ctx, ctx.callpath(), static_cast<std::int64_t>(e.time));
  }

  static constexpr std::int64_t kNever = INT64_MIN;
  std::unordered_map<int, std::int64_t> last_;  // per location, persists across epochs
};

}  // namespace

std::unique_ptr<Pattern> make_time_visits() { return std::make_unique<TimeVisits>(); }

}  // namespace onlinews::analysis
