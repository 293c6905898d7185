// Message matching without message-by-message replay (DESIGN.md §5): every
// rank sends, in one parcel per peer and epoch, the records of all its sends
// to that peer; receivers match them locally by MPI's rules (FIFO per source,
// communicator and tag, in the order receives were *posted*).  Records whose
// receive lies in a later epoch wait in `pending`.  The receivers' replies
// (posting times, Late Sender amounts) travel back the same way.
#include <algorithm>
#include <cstring>

#include "engine.hpp"

namespace onlinews::analysis {

void Analyzer::Impl::collect_messages(const LocationWindow& w, std::size_t begin, std::size_t end) {
  LocationState& st = loc(w.location);
  const int me = defs.world_rank;
  for (std::size_t i = begin; i < end; ++i) {
    const Event& e = w.events[i];
    const EventAnnotation& a = st.annot[i];
    if (a.callpath == kNoCallpath) continue;
    const CommDef* c = (e.kind == EventKind::Enter || e.kind == EventKind::Leave) ? nullptr : defs.comm(e.comm);
    switch (e.kind) {
      case EventKind::CollStart:
      case EventKind::CollComplete:
        collect_nb(e, st, i, c);
        break;
      case EventKind::Send:
      case EventKind::SendRequest: {
        if (c == nullptr || !c->usable) break;
        const int dest = c->world_rank_of(e.peer);
        if (dest < 0) break;
        SendRecord r;
        r.comm_gid = c->gid;
        r.enter = a.enter;
        r.bytes = e.bytes;
        r.tag = e.tag;
        r.src = me;
        auto& list = outgoing[dest];
        r.seq = static_cast<std::uint32_t>(list.size());
        r.epoch = static_cast<std::uint32_t>(epoch);
        r.callpath = a.callpath;
        const bool standard = (e.flags & (evflag::kBuffered | evflag::kReady)) == 0;
        if ((e.flags & evflag::kSynchronous) != 0 || (standard && e.bytes > defs.eager_limit_to(dest))) {
          r.flags |= sendflag::kSynchronous;
        }
        const RegionDef* rd = defs.region(callpaths.node(a.callpath).region);
        if (e.kind == EventKind::Send && rd != nullptr && (rd->attrs & region_attr::kBlockingSend) != 0) {
          r.flags |= sendflag::kBlocking;
        }
        list.push_back(r);
        send_events.set(dest, r.seq, i);
        if (e.kind == EventKind::Send) {
          send_refs.push_back({i, {dest, r.seq}});
          // A blocking synchronizing send still waiting at the cut: its
          // receive may be posted in a later window, and its Leave there
          // is the call that waited for it (Late Receiver).
          const bool sync_blocking = (r.flags & (sendflag::kSynchronous | sendflag::kBlocking)) ==
                                     (sendflag::kSynchronous | sendflag::kBlocking);
          if (sync_blocking && a.leave == kOpen) open_blocking[a.frame] = {dest, r.seq, epoch};
        } else {
          open_sends[e.request] = {dest, r.seq, epoch};
        }
        break;
      }
      case EventKind::SendComplete: {
        const OpenSend* o = open_sends.find(e.request);
        if (o == nullptr) break;
        if (o->epoch == epoch) {
          send_refs.push_back({i, {o->dest, o->seq}});
        } else {
          earlier_refs[{o->dest, o->seq, static_cast<std::uint32_t>(o->epoch)}] = i;
        }
        open_sends.erase(e.request);
        break;
      }
      case EventKind::Leave: {
        if (open_blocking.empty()) break;
        const OpenSend* o = open_blocking.find(a.frame);
        if (o == nullptr) break;
        earlier_refs[{o->dest, o->seq, static_cast<std::uint32_t>(o->epoch)}] = i;
        open_blocking.erase(a.frame);
        break;
      }
      case EventKind::Probe: {
        if (c == nullptr || !c->usable) break;
        // A probe of a message already probed (same envelope and handle,
        // not yet received) is a repeat: it stays unlinked, so nothing is
        // analyzed in it.  A matched probe takes its message from MPI's
        // queue here, so the message is matched in this order.
        const ProbeKey key{c->gid, c->world_rank_of(e.peer), e.tag, e.handle()};
        if (pending_probes.count(key) != 0) break;
        // A regular probe still pending on this envelope saw the message a
        // matched probe takes now: it stands for the matched probe (which
        // found the message there, a repeat).
        const auto seen = e.handle() != 0 ? pending_probes.find({key.gid, key.src, key.tag, 0}) : pending_probes.end();
        std::size_t first = i;
        if (seen != pending_probes.end()) {
          first = seen->second.event;
          pending_probes.erase(seen);
        }
        pending_probes[key] = {first, e.handle() != 0 ? next_post_seq++ : 0};
        break;
      }
      case EventKind::Match:
        current_match = e.handle();
        break;
      case EventKind::Recv: {
        if (c == nullptr || !c->usable) break;
        std::uint64_t seq = 0;
        const int src = c->world_rank_of(e.peer);
        if (auto p = take_probe({c->gid, src, e.tag, current_match})) {
          if (p->event != kNoEvent) probed.emplace_back(i, p->event);
          seq = current_match != 0 ? p->post_seq : next_post_seq++;
        } else {
          seq = next_post_seq++;
        }
        current_match = 0;
        CompletedRecv cr{i, seq, c->gid, src, e.tag, i};
        cr.post_location = origin(i);
        completed.push_back(cr);
        break;
      }
      case EventKind::RecvRequest: {
        if (c == nullptr || !c->usable) break;
        const int src = e.peer == kAnySource ? -1 : c->world_rank_of(e.peer);
        OpenRecv o;
        o.post_event = i;
        o.post_epoch = epoch;
        o.comm_gid = c->gid;
        o.src = src;
        o.tag = e.tag;
        o.post_location = origin(i);
        const auto p = current_match != 0 ? take_probe({c->gid, src, e.tag, current_match}) : std::nullopt;
        if (p) {  // MPI_Imrecv of a matched probe
          o.post_seq = p->post_seq;
          o.probe_event = p->event;
        } else {
          o.post_seq = next_post_seq++;
        }
        current_match = 0;
        open_recvs[e.request] = o;
        break;
      }
      case EventKind::RecvComplete: {
        const OpenRecv* found = open_recvs.find(e.request);
        if (found == nullptr) {
          if ((e.flags & evflag::kCancelled) == 0) ++facts.unmatched_receives;
          break;
        }
        const OpenRecv o = *found;
        open_recvs.erase(e.request);
        if ((e.flags & evflag::kCancelled) != 0 || c == nullptr || !c->usable) break;
        if (o.probe_event != kNoEvent && o.post_epoch == epoch) {
          probed.emplace_back(i, o.probe_event);
        } else if (auto p = take_probe({c->gid, c->world_rank_of(e.peer), e.tag, 0})) {
          probed.emplace_back(i, p->event);  // a regular probe, then MPI_Irecv of its message
        }
        CompletedRecv cr{i, o.post_seq, c->gid, c->world_rank_of(e.peer), e.tag};
        cr.post_location = o.post_location;
        if (o.post_epoch == epoch) {
          cr.post_event = o.post_event;
        } else {
          cr.earlier_post_enter = o.post_enter;
          cr.earlier_post_leave = o.post_leave;
        }
        completed.push_back(cr);
        break;
      }
      case EventKind::CollectiveEnd:
        coll_events[e.comm].push_back(i);
        break;
      default:
        break;
    }
  }
}

Task<> Analyzer::Impl::exchange_and_match(const LocationWindow& w, Transport& t) {
  flag_ambiguous_sends(w);
  for (const auto& [src, list] : co_await exchange_records(t, outgoing)) {
    for (const auto& r : list) pending.push(r);
  }
  outgoing.clear();  // (sent: the sends' times live in their events)
  if (facts.comm_analysis_skipped) {
    // Alignment is lost: start afresh after this window (documented).
    facts.unmatched_receives += pending.total();
    pending.clear();
    open_recvs.clear();
    open_sends.clear();
    open_blocking.clear();
    facts.crossing_sync_sends += held_replies.size();
    held_replies.clear();
    pending_probes.clear();
    current_match = 0;
    realign = 2;
    co_return;
  }
  // Receives complete mostly in the order they were posted.
  const auto by_post = [](const CompletedRecv& a, const CompletedRecv& b) { return a.post_seq < b.post_seq; };
  if (!std::is_sorted(completed.begin(), completed.end(), by_post)) std::sort(completed.begin(), completed.end(), by_post);
  LocationState& st = loc(w.location);
  // A receive request that was posted earlier, is still open and names
  // exactly a completed receive's envelope will take the oldest message
  // first (MPI's non-overtaking rule), so that many messages are left for
  // such requests.  Their posting order per envelope, sorted once (a scan
  // of every open request per completed receive was quadratic in codes
  // that keep many receives posted).
  std::map<MsgKey, std::vector<std::uint64_t>> open_by_envelope;
  open_recvs.for_each([&](std::uint32_t, const OpenRecv& o) {
    if (o.src >= 0 && o.tag != kAnyTag) open_by_envelope[{o.src, o.comm_gid, o.tag}].push_back(o.post_seq);
  });
  // (So is a matched probe's message, until its MPI_Mrecv/MPI_Imrecv.)
  for (const auto& [k, q] : pending_probes) {
    if (k.message != 0) open_by_envelope[{k.src, k.gid, k.tag}].push_back(q.post_seq);
  }
  for (auto& [key, seqs] : open_by_envelope) std::sort(seqs.begin(), seqs.end());
  const std::vector<char> ambiguous = ambiguous_receives(w);
  for (std::size_t k = 0; k < completed.size(); ++k) {
    const CompletedRecv& cr = completed[k];
    const MsgKey key{cr.src, cr.comm_gid, cr.tag};
    std::size_t reserved = 0;
    if (!open_by_envelope.empty()) {
      const auto o = open_by_envelope.find(key);
      if (o != open_by_envelope.end()) {
        reserved = static_cast<std::size_t>(std::lower_bound(o->second.begin(), o->second.end(), cr.post_seq) -
                                            o->second.begin());
      }
    }
    if (pending.size(key) <= reserved) {
      ++facts.unmatched_receives;
      continue;
    }
    // After a window that lost events, a receive may have taken a message
    // of that window, whose send record is gone: the oldest send left then
    // started after the receive had returned.  Pairing them would shift
    // every later message on this envelope by one (and put a message
    // against time into the backward replay); leaving the send for the
    // next receive realigns the envelope.
    if (realign > 0 && pending.at(key, reserved).enter > st.annot[cr.event].leave) {
      ++facts.unmatched_receives;
      continue;
    }
    const SendRecord r = pending.take(key, reserved);
    // (Matched, so that later messages stay aligned; not analyzed.)
    if (ambiguous[k] != 0 || (r.flags & sendflag::kAmbiguous) != 0) {
      ++facts.ambiguous_messages;
      continue;
    }
    if (r.epoch != static_cast<std::uint32_t>(epoch)) {
      ++facts.cross_epoch_messages;
      // (Only a synchronizing send can wait for its posting.)
      if ((r.flags & sendflag::kSynchronous) != 0 && cr.post_event != kNoEvent) {
        sync_in.earlier_postings[{r.src, r.seq, r.epoch}] = cr.post_event;
      }
    } else if (cr.post_event != kNoEvent) {
      sync_in.postings.set(r.src, r.seq, cr.post_event);
    }
    st.links[cr.event] = static_cast<std::int32_t>(matched.size());
    matched.push_back(r);
  }
  // A probe sees the send its receive matched; the receive itself no longer
  // waits for it (the probe did).
  for (const auto& [recv, probe] : probed) {
    if (st.links[recv] < 0) continue;
    st.links[probe] = st.links[recv];
    st.marks[recv] |= mark::kProbed;
  }
  link_unreceived_probes(st);
  current_match = 0;
}

Task<> Analyzer::Impl::exchange_replies(const LocationWindow& w, Transport& t) {
  const int me = defs.world_rank;
  LocationState& st = loc(w.location);
  probe_of.clear();
  for (const auto& [recv, probe] : probed) probe_of[recv] = probe;
  std::map<int, std::vector<ReplyRecord>> back;
  // The reply to a send of `s`, about a receive (or probe) that waited ls_wait.
  auto reply_to = [&](const SendRecord& s, double ls_wait) {
    ReplyRecord r;
    r.seq = s.seq;
    r.epoch = s.epoch;
    r.earlier = s.epoch != static_cast<std::uint32_t>(epoch) ? 1 : 0;
    r.receiver = me;
    r.bytes = s.bytes;
    r.flags = s.flags;
    r.ls_wait = ls_wait;
    return r;
  };
  std::vector<ReplyRecord>* to = nullptr;
  int to_src = -1;
  for (const CompletedRecv& cr : completed) {
    const std::int32_t l = st.links[cr.event];
    if (l < 0 || facts.comm_analysis_skipped) continue;
    const SendRecord& s = matched[l];
    // The Late Sender instance (for a Waitall: its longest wait only; for a
    // probed message: the probe's).
    const std::size_t* pr = probe_of.find(cr.event);
    const double* ls = late_sender_waits.find(pr != nullptr ? *pr : cr.event);
    const double ls_wait = ls != nullptr ? *ls : 0.0;
    const bool earlier = s.epoch != static_cast<std::uint32_t>(epoch);
    const bool plain = !is_traced(ls_wait) && (s.flags & sendflag::kSynchronous) == 0;
    // The sender's epoch is over: it needs only to hear of a wait for it
    // (its interval was kept, sync_replay.hpp LsSendEarlier), or, for a
    // synchronizing send, when the receive was posted (its completion,
    // in this window, may have waited for that: Late Receiver).
    if (earlier && plain) continue;
    if (s.src != to_src) {
      to = &back[s.src];
      to_src = s.src;
    }
    if (!earlier && plain && !to->empty()) {  // (ReplyRecord::more)
      ReplyRecord& last = to->back();
      if (last.earlier == 0 && last.seq + last.more + 1u == s.seq && last.more < UINT16_MAX) {
        ++last.more;
        continue;
      }
    }
    ReplyRecord r = reply_to(s, ls_wait);
    std::tie(r.post_enter, r.post_leave) = posting_times(cr, st);
    // (Against the send's start: a Wait entered later may still not have
    // waited, so what is held or counted by this is an upper estimate.)
    if ((s.flags & sendflag::kSynchronous) != 0 && r.post_enter > s.enter) r.flags |= sendflag::kPostedLate;
    to->push_back(r);
  }
  // A probe whose message is received in a later window: only a wait in it
  // is news to the sender (the receive replies as usual; its posting times
  // are the receive's, so none here).
  for (const std::size_t probe : unreceived_linked) {
    const std::int32_t l = st.links[probe];
    const double* ls = late_sender_waits.find(probe);
    if (l < 0 || facts.comm_analysis_skipped || ls == nullptr || !is_traced(*ls)) continue;
    const SendRecord& s = matched[static_cast<std::size_t>(l)];
    back[s.src].push_back(reply_to(s, *ls));
  }
  auto got = co_await exchange_records(t, back);
  auto link = [&](std::size_t event, const ReplyRecord& r) {
    st.links[event] = static_cast<std::int32_t>(replies.size());
    replies.push_back(r);
  };
  // A synchronizing send's reply whose send is still open (its completion
  // comes in a later window) is held for it.
  std::set<EpochSendKey> open_keys;
  bool open_known = false;
  auto held = [&](int src, const ReplyRecord& r) {
    if (!open_known) {
      open_known = true;
      auto add = [&](std::uint32_t, const OpenSend& o) {
        open_keys.insert({o.dest, o.seq, static_cast<std::uint32_t>(o.epoch)});
      };
      open_sends.for_each(add);
      open_blocking.for_each(add);
    }
    if (open_keys.count({src, r.seq, r.epoch}) == 0) return false;
    held_replies[{src, r.seq, r.epoch}] = {r, epoch};
    return true;
  };
  // Replies held from earlier windows meet their completion here, or are
  // given up (the send returned before the reply's window: not analyzed).
  for (auto it = held_replies.begin(); it != held_replies.end();) {
    const auto ref = earlier_refs.find(it->first);
    if (ref != earlier_refs.end()) {
      link(ref->second, it->second.reply);
    } else if (epoch - it->second.since < kHoldWindows) {
      ++it;
      continue;
    } else {
      ++facts.crossing_sync_sends;
    }
    it = held_replies.erase(it);
  }
  // Link each send (or send completion) to its reply.  Sequence numbers are
  // dense per destination and epoch, so index the replies by them.
  std::map<int, std::vector<std::int32_t>> by_seq;  // a reply's index, or:
  constexpr std::int32_t kNoReply = -1, kPlainReply = -2;
  for (auto& [src, list] : got) {
    auto& idx = by_seq[src];
    for (std::size_t k = 0; k < list.size(); ++k) {
      const ReplyRecord& r = list[k];
      if (r.earlier != 0) {
        if (is_traced(r.ls_wait)) sync_in.late_earlier_sends.emplace_back(src, r.seq, r.epoch);
        if ((r.flags & sendflag::kSynchronous) != 0) {
          // Linked to its completion in this window, or held for a later
          // one; a send that returned before this window is not analyzed
          // (counted, unless the receive was posted before the send began:
          // then it was no Late Receiver).
          const auto ref = earlier_refs.find({src, r.seq, r.epoch});
          if (ref != earlier_refs.end()) {
            link(ref->second, r);
          } else if ((r.flags & sendflag::kPostedLate) != 0 && !held(src, r)) {
            ++facts.crossing_sync_sends;
          }
        }
        continue;
      }
      const std::uint32_t q = list[k].seq;
      if (q + list[k].more >= idx.size()) idx.resize(q + list[k].more + 1, kNoReply);
      idx[q] = static_cast<std::int32_t>(k);
      for (std::uint32_t j = 1; j <= list[k].more; ++j) idx[q + j] = kPlainReply;
    }
  }
  for (const auto& [event, ref] : send_refs) {
    auto g = by_seq.find(ref.first);
    if (g == by_seq.end() || ref.second >= g->second.size() || g->second[ref.second] < 0) continue;
    link(event, got[ref.first][static_cast<std::size_t>(g->second[ref.second])]);
  }
  for (const auto& [src, list] : got) {
    for (const ReplyRecord& r : list) {
      if (r.earlier != 0) continue;
      if (is_traced(r.ls_wait)) {
        if (const std::size_t* ev = send_events.find(src, r.seq)) sync_in.late_sends.push_back({{src, r.seq}, *ev});
      }
      // (Also after a Late Sender: a probe that waited for the message, a
      // receive posted late after it.  A send of this window that is not
      // open completed in it.)
      if ((r.flags & sendflag::kPostedLate) != 0) held(src, r);
    }
  }
  // Sends without a reply: their receive lies in a later window (or never
  // comes); the backward replay keeps their intervals for it.
  if (facts.comm_analysis_skipped) co_return;
  send_events.for_each([&](int dest, std::uint32_t seq, std::size_t event) {
    auto g = by_seq.find(dest);
    if (g != by_seq.end() && seq < g->second.size() && g->second[seq] != kNoReply) return;
    const EventAnnotation& a = st.annot[event];
    sync_in.crossing_sends.push_back({dest, seq, event, a.enter, a.callpath});
  });
}

}  // namespace onlinews::analysis
