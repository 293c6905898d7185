// Collective instances, analyzed per communicator and epoch with one vector
// reduction (DESIGN.md §5): the k-th collective on a communicator is the same
// operation on every member, and cuts never split an instance, so each
// member's list of this epoch's instances lines up with everyone else's.
// Communicators are visited in increasing global id on every rank, so these
// reductions cannot deadlock.
#include <algorithm>
#include <climits>

#include "engine.hpp"

namespace onlinews::analysis {

void combine(CollRecord& a, const CollRecord& b) {
  if (b.max_enter > a.max_enter || (b.max_enter == a.max_enter && b.max_enter_rank < a.max_enter_rank)) {
    a.max_enter = b.max_enter;
    a.max_enter_rank = b.max_enter_rank;
  }
  a.min_leave = std::min(a.min_leave, b.min_leave);
  a.root_enter = std::max(a.root_enter, b.root_enter);
  if (b.max_sender_enter > a.max_sender_enter ||
      (b.max_sender_enter == a.max_sender_enter && b.max_sender_rank < a.max_sender_rank)) {
    a.max_sender_enter = b.max_sender_enter;
    a.max_sender_rank = b.max_sender_rank;
  }
  a.root_bytes = std::max(a.root_bytes, b.root_bytes);
  a.min_enter = std::min(a.min_enter, b.min_enter);
}

void combine(ScanRecord& a, const ScanRecord& b) {
  if (b.max_enter > a.max_enter || (b.max_enter == a.max_enter && b.rank < a.rank)) a = b;
}

Task<> Analyzer::Impl::agree_comms(Transport& t) {
  coll_agreed.clear();
  retired.clear();
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order;
  for (std::size_t id = 0; id < defs.comms.size(); ++id) {
    const CommDef& c = defs.comms[id];
    if (!c.usable || c.my_rank < 0) continue;
    // Not yet on every member (see CommDef::active_from): nothing of it in
    // this epoch, and another member may not know it yet.
    if (c.active_from > static_cast<std::uint32_t>(epoch) + 1) continue;
    if (c.size > 1) {
      order.emplace_back(c.gid, static_cast<std::uint16_t>(id));
      continue;
    }
    if (c.mixed_p2p) mixed_p2p.insert(c.gid);  // nobody else to agree with
    if (c.freed) retired.push_back(c.gid);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [gid, id] : order) {
    const CommDef& c = defs.comms[id];
    auto found = coll_events.find(id);
    const std::size_t n = found == coll_events.end() ? 0 : found->second.size();
    // Counts differ only after lost events or an unsupported use: then this
    // communicator's instances are skipped.
    CollRecord head{};
    head.max_enter = head.min_enter = static_cast<std::int64_t>(n);
    head.root_bytes = c.mixed_p2p || mixed_p2p.count(gid) != 0 ? 1 : 0;
    head.root_enter = c.mixed_collective || mixed_collective.count(gid) != 0 ? 1 : 0;
    head.min_leave = c.freed ? 1 : 0;  // all members freed it: release it after this epoch
    head.max_enter_rank = head.max_sender_rank = 0;
    head.max_sender_enter = 0;
    co_await t.allreduce(c, &head, 1);
    if (head.min_leave == 1) retired.push_back(gid);
    if (head.root_bytes > 0) mixed_p2p.insert(gid);
    if (head.root_enter > 0) mixed_collective.insert(gid);
    coll_agreed[id] = head.max_enter == head.min_enter && head.root_enter == 0 ? n : 0;
  }
}

Task<> Analyzer::Impl::reduce_collectives(const LocationWindow& w, Transport& t) {
  LocationState& st = loc(w.location);
  const int me = defs.world_rank;
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order;
  for (const auto& [id, n] : coll_agreed) {
    if (n > 0) order.emplace_back(defs.comms[id].gid, id);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [gid, id] : order) {
    const CommDef& c = defs.comms[id];
    const auto& evs = coll_events[id];
    const std::size_t n = evs.size();
    std::vector<CollRecord> recs(n);
    std::vector<ScanRecord> scans(n);
    bool any_scan = false;
    for (std::size_t k = 0; k < n; ++k) {
      const Event& e = w.events[evs[k]];
      const EventAnnotation& a = st.annot[evs[k]];
      const RegionDef* rd = defs.region(callpaths.node(a.callpath).region);
      const CollKind kind = rd != nullptr ? rd->coll : CollKind::None;
      const bool root = e.peer >= 0 && e.peer == c.my_rank;
      const bool sends = e.bytes > 0;
      CollRecord& r = recs[k];
      r.max_enter = a.enter;
      r.max_enter_rank = me;
      r.min_leave = a.leave;
      r.root_enter = root ? a.enter : INT64_MIN;
      r.max_sender_enter = sends ? a.enter : INT64_MIN;
      r.max_sender_rank = sends ? me : INT64_MAX;
      r.root_bytes = !root ? INT64_MIN
                     : kind == CollKind::NToOne ? static_cast<std::int64_t>(e.bytes_in())
                                                : static_cast<std::int64_t>(e.bytes);
      r.min_enter = a.enter;
      scans[k] = {sends ? a.enter : INT64_MIN, sends ? me : INT64_MAX};
      any_scan = any_scan || kind == CollKind::Scan || kind == CollKind::Exscan;
    }
    co_await t.allreduce(c, recs.data(), n);
    if (any_scan) co_await t.scan(c, scans.data(), n);
    for (std::size_t k = 0; k < n; ++k) {
      st.links[evs[k]] = static_cast<std::int32_t>(colls.size());
      colls.push_back({recs[k], scans[k], true});
    }
  }
}

}  // namespace onlinews::analysis
