// Collective instances, analyzed per communicator and epoch with one vector
// reduction (DESIGN.md §5): the k-th collective on a communicator is the same
// operation on every member.  A synchronizing cut never splits an instance;
// a requested cut may (it falls between two members' Leave of the same
// instance, each rank cutting its own stream at T): every member then
// counts its instances since the start (or since the first synchronizing
// cut after a window that lost events), and the instances every member has
// in this window are analyzed;
// the split one, in one member's earlier window and another's later one, is
// left out on both and counted (split_collectives).
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
    a.max_enter_at = b.max_enter_at;
  }
  a.min_leave = std::min(a.min_leave, b.min_leave);
  if (b.root_enter > a.root_enter) {
    a.root_enter = b.root_enter;
    a.root_at = b.root_at;
  }
  if (b.max_sender_enter > a.max_sender_enter ||
      (b.max_sender_enter == a.max_sender_enter && b.max_sender_rank < a.max_sender_rank)) {
    a.max_sender_enter = b.max_sender_enter;
    a.max_sender_rank = b.max_sender_rank;
    a.max_sender_at = b.max_sender_at;
  }
  a.root_bytes = std::max(a.root_bytes, b.root_bytes);
  a.min_enter = std::min(a.min_enter, b.min_enter);
}

void combine(ScanRecord& a, const ScanRecord& b) {
  if (b.max_enter > a.max_enter || (b.max_enter == a.max_enter && b.rank < a.rank)) a = b;
}

Task<> Analyzer::Impl::agree_comms(Transport& t) {
  coll_agreed.clear();
  nb_agreed.clear();
  retired.clear();
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order;
  for (std::size_t id = 0; id < defs.comms.size(); ++id) {
    const CommDef& c = defs.comms[id];
    if (!c.usable || c.my_rank < 0) continue;
    // Not yet on every member (see CommDef::active_from): nothing of it in
    // this epoch, and another member may not know it yet.
    if (c.active_from > static_cast<std::uint32_t>(epoch) + 1) {
      auto found = coll_events.find(static_cast<std::uint16_t>(id));
      coll_seen[c.gid] += found == coll_events.end() ? 0 : found->second.size();
      continue;
    }
    if (c.size > 1) {
      order.emplace_back(c.gid, static_cast<std::uint16_t>(id));
      continue;
    }
    if (c.mixed_rma) mixed_rma.insert(c.gid);  // nobody else to agree with
    if (!facts.comm_analysis_skipped && !c.mixed_collective) nb_agreed[static_cast<std::uint16_t>(id)] = nb_numbered[c.gid];
    if (c.freed) retired.push_back(c.gid);
  }
  std::sort(order.begin(), order.end());
  // After lost events the counts restart where no instance can be split.
  if (coll_resync && sync_in.bounds.starts_synchronized && !facts.comm_analysis_skipped) {
    coll_seen.clear();
    coll_resync = false;
  }
  for (const auto& [gid, id] : order) {
    const CommDef& c = defs.comms[id];
    auto found = coll_events.find(id);
    const std::size_t n = found == coll_events.end() ? 0 : found->second.size();
    const std::uint64_t first = coll_seen[gid];
    // The range of instances every member has: [max first, min end).  After
    // an unsupported use (a thread that is not analyzed) this communicator's
    // instances are skipped.
    CollRecord head{};
    head.max_enter = static_cast<std::int64_t>(first);
    head.min_enter = static_cast<std::int64_t>(first + n);
    head.root_bytes = c.mixed_rma || mixed_rma.count(gid) != 0 ? 1 : 0;
    head.root_enter = c.mixed_collective || mixed_collective.count(gid) != 0 ? 1 : 0;
    head.min_leave = c.freed ? 1 : 0;  // all members freed it: release it after this epoch
    head.max_enter_rank = head.max_sender_rank = 0;
    head.max_sender_enter = -static_cast<std::int64_t>(nb_numbered[gid]);  // (the maximum: minus the minimum)
    co_await t.allreduce(c, &head, 1);
    if (head.min_leave == 1) retired.push_back(gid);
    if (head.root_bytes > 0) mixed_rma.insert(gid);
    if (head.root_enter > 0) mixed_collective.insert(gid);
    const auto lo = static_cast<std::uint64_t>(head.max_enter), hi = static_cast<std::uint64_t>(head.min_enter);
    const bool counted = head.root_enter == 0 && !facts.comm_analysis_skipped && !coll_resync;
    const bool analyzed = counted && hi > lo;
    coll_agreed[id] = analyzed ? AgreedInstances{lo - first, hi - lo, lo} : AgreedInstances{};
    if (counted) facts.split_collectives += n - (analyzed ? hi - lo : 0);
    if (head.root_enter == 0 && !facts.comm_analysis_skipped) {
      nb_agreed[id] = static_cast<std::uint64_t>(-head.max_sender_enter);
    }
    coll_seen[gid] = first + n;
    if (head.min_leave == 1) {  // every member freed it
      coll_seen.erase(gid);
      nb_retired.push_back(gid);  // (its instances are reduced first: reduce_nb)
    }
  }
  // Dropped events may have taken instances.
  coll_resync = coll_resync || facts.comm_analysis_skipped;
}

Task<> Analyzer::Impl::reduce_collectives(const LocationWindow& w, Transport& t) {
  LocationState& st = loc(w.location);
  const int me = defs.world_rank;
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order;
  for (const auto& [id, range] : coll_agreed) {
    if (range.count > 0) order.emplace_back(defs.comms[id].gid, id);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [gid, id] : order) {
    const CommDef& c = defs.comms[id];
    const auto [off, n, number] = coll_agreed[id];
    const std::size_t* evs = coll_events[id].data() + off;
    std::vector<CollRecord> recs(n);
    std::vector<ScanRecord> scans(n);
    bool any_scan = false;
    for (std::size_t k = 0; k < n; ++k) {
      const Event& e = w.events[evs[k]];
      const EventAnnotation& a = st.annot[evs[k]];
      const RegionDef* rd = defs.region(callpaths.node(a.callpath).region);
      const CollKind kind = rd != nullptr ? rd->coll : CollKind::None;
      const bool root = e.root() >= 0 && e.root() == c.my_rank;
      const bool sends = e.bytes_out() > 0;
      CollRecord& r = recs[k];
      r.max_enter = a.enter;
      r.max_enter_rank = me;
      r.min_leave = a.leave;
      r.root_enter = root ? a.enter : INT64_MIN;
      r.max_sender_enter = sends ? a.enter : INT64_MIN;
      r.max_sender_rank = sends ? me : INT64_MAX;
      r.root_bytes = !root ? INT64_MIN
                     : kind == CollKind::NToOne ? static_cast<std::int64_t>(e.bytes_in())
                                                : static_cast<std::int64_t>(e.bytes_out());
      r.min_enter = a.enter;
      scans[k] = {sends ? a.enter : INT64_MIN, sends ? me : INT64_MAX};
      any_scan = any_scan || kind == CollKind::Scan || kind == CollKind::Exscan;
    }
    co_await t.allreduce(c, recs.data(), n);
    if (any_scan) co_await t.scan(c, scans.data(), n);
    for (std::size_t k = 0; k < n; ++k) {
      st.links[evs[k]] = static_cast<std::int32_t>(colls.size());
      colls.push_back({recs[k], scans[k], number + k, true});
    }
  }
}

}  // namespace onlinews::analysis
