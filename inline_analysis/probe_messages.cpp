// Which message a probe saw (DESIGN.md §5, probes; seed 004 §3.3).  A probe
// is linked to the send record of the message it saw, so that the Late
// Sender in it is analyzed: usually through the receive that takes that
// message in the same window (matching.cpp), otherwise here.
#include "engine.hpp"

namespace onlinews::analysis {

std::optional<PendingProbe> Analyzer::Impl::take_probe(const ProbeKey& key) {
  auto it = pending_probes.find(key);
  if (it == pending_probes.end()) return std::nullopt;
  const PendingProbe p = it->second;
  pending_probes.erase(it);
  return p;
}

// A probe whose message is not received in its window (after a cut, on
// another thread, or never) waited all the same for that message's send.
// Its message is already in `pending` (it had arrived when the probe
// returned, so its send lies in this window or an earlier one), and the
// receives of this window have taken theirs from there.  Linked to a copy
// of the record, the probe is analyzed in its own window as in one epoch;
// the record stays queued for the receive, which, after the probe, waits
// for nothing.  (Without this, a requested cut between a probe and its
// receive lost the probe's Late Sender.)
void Analyzer::Impl::link_unreceived_probes(LocationState& st) {
  for (const auto& [key, p] : pending_probes) {
    const SendRecord* r = probed_message(key, p, st);
    if (r == nullptr) {
      ++facts.unreceived_probes;  // (not analyzed)
      continue;
    }
    st.links[p.event] = static_cast<std::int32_t>(matched.size());
    matched.push_back(*r);
    unreceived_linked.push_back(p.event);
  }
  pending_probes.clear();
}

// The message on the probe's envelope that MPI's non-overtaking rule gives
// it: the oldest one left, after those that receives posted before the
// probe and still open (or messages taken by earlier matched probes) will
// take.  Unknown (nullptr) if an open wildcard receive posted before the
// probe might take one of them, if fewer are queued (a send record lost
// with a window's events), or if it is an ambiguous message.
const SendRecord* Analyzer::Impl::probed_message(const ProbeKey& key, const PendingProbe& p,
                                                 const LocationState& st) {
  std::size_t reserved = 0;
  bool wildcard = false;
  open_recvs.for_each([&](std::uint32_t, const OpenRecv& o) {
    if (o.comm_gid != key.gid || (o.post_epoch == epoch && o.post_event > p.event)) return;
    if (o.src == key.src && o.tag == key.tag) {
      ++reserved;
    } else if ((o.src < 0 || o.src == key.src) && (o.tag == kAnyTag || o.tag == key.tag)) {
      wildcard = true;
    }
  });
  for (const auto& [k, q] : pending_probes) {  // matched probes took theirs from MPI's queue
    if (k.gid == key.gid && k.src == key.src && k.tag == key.tag && k.message != 0 && q.event < p.event) ++reserved;
  }
  if (wildcard) return nullptr;
  auto it = pending.find({key.src, key.gid, key.tag});
  if (it == pending.end() || it->second.size() <= reserved) return nullptr;
  const SendRecord& r = it->second[reserved];
  // (After a window that lost events, as for receives: a send that started
  // after the probe returned is not its message.)
  if ((r.flags & sendflag::kAmbiguous) != 0 || (realign > 0 && r.enter > st.annot[p.event].leave)) return nullptr;
  return &r;
}

}  // namespace onlinews::analysis
