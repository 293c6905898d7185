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

// A probe whose message is not received in its window (after a cut, or
// never) waited all the same for that message's send.  Its message is
// already in `pending` (it had arrived when the probe returned, so its send
// lies in this window or an earlier one), and the receives of this window
// have taken theirs from there.  Linked to a copy of the record, the probe
// is analyzed in its own window as in one epoch; the record stays queued
// for the receive, which, after the probe, waits for nothing.  (Without
// this, a requested cut between a probe and its receive lost the probe's
// Late Sender.)  A matched probe's message is MPI's from then on: its
// posting order is kept for its MPI_Mrecv/MPI_Imrecv in a later window
// (event kNoEvent: already analyzed).
void Analyzer::Impl::link_unreceived_probes(LocationState& st) {
  std::vector<std::pair<ProbeKey, PendingProbe>> carried;
  for (const auto& [key, p] : pending_probes) {
    if (p.event == kNoEvent) {  // (carried from an earlier window)
      carried.emplace_back(key, p);
      continue;
    }
    if (key.message != 0) carried.push_back({key, {kNoEvent, p.post_seq}});
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
  // (An MPI_Message must be received; a program that never does so would
  // grow this: bounded, the oldest forgotten.)
  constexpr std::size_t kMaxCarried = 4096;
  if (carried.size() > kMaxCarried) carried.erase(carried.begin(), carried.end() - kMaxCarried);
  for (const auto& [key, p] : carried) pending_probes[key] = p;
}

// The message on the probe's envelope that MPI's non-overtaking rule gives
// it: the oldest one left, after those that receives posted before the
// probe and still open, and matched probes before it, will take.  Unknown
// (nullptr) if an open wildcard receive posted before the probe might take
// one of them, if fewer are queued (a send record lost with a window's
// events), if it is an ambiguous message, or where threads share MPI (the
// probes of several threads interleave in the merged view).
const SendRecord* Analyzer::Impl::probed_message(const ProbeKey& key, const PendingProbe& p,
                                                 const LocationState& st) {
  if (view_merged() && defs.threads_share_mpi) return nullptr;
  std::size_t reserved = 0;
  bool wildcard = false;
  open_recvs.for_each([&](std::uint32_t, const OpenRecv& o) {
    // (An MPI_Imrecv's message was taken at its matched probe.)
    const std::size_t at = o.probe_event != kNoEvent ? o.probe_event : o.post_event;
    if (o.comm_gid != key.gid || (o.post_epoch == epoch && at > p.event)) return;
    if (o.src == key.src && o.tag == key.tag) {
      ++reserved;
    } else if ((o.src < 0 || o.src == key.src) && (o.tag == kAnyTag || o.tag == key.tag)) {
      wildcard = true;
    }
  });
  for (const auto& [k, q] : pending_probes) {  // matched probes took theirs from MPI's queue
    if (k.gid == key.gid && k.src == key.src && k.tag == key.tag && k.message != 0 &&
        (q.event == kNoEvent || q.event < p.event)) {
      ++reserved;
    }
  }
  if (wildcard) return nullptr;
  const MsgKey envelope{key.src, key.gid, key.tag};
  if (pending.size(envelope) <= reserved) return nullptr;
  const SendRecord& r = pending.at(envelope, reserved);
  // (After a window that lost events, as for receives: a send that started
  // after the probe returned is not its message.)
  if ((r.flags & sendflag::kAmbiguous) != 0 || (realign > 0 && r.enter > st.annot[p.event].leave)) return nullptr;
  return &r;
}

}  // namespace onlinews::analysis
