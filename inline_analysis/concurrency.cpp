// Concurrent MPI calls of several threads of a rank (MPI_THREAD_MULTIPLE).
// MPI orders the messages of one envelope (source or destination,
// communicator, tag) by the order in which their sends, and their
// receives, were posted.  Calls of one thread are posted in program order;
// calls of different threads are ordered only if one returned before the
// other began.  So where postings on one envelope from several threads
// overlap in time, the pairing of their messages is unknown: each such
// group of overlapping postings is still matched in the order observed
// (the counts, and so every later message, stay aligned), but its messages
// are not analyzed (counted: ambiguous_messages).  Everything else --
// different envelopes, or postings one after the other -- is exact.
#include <algorithm>

#include "engine.hpp"

namespace onlinews::analysis {
namespace {

using Tail = PostingTail;

struct Posting {
  std::int64_t enter, leave;  // the posting call (leave kOpen: still open)
  int location;
  std::size_t item;
  std::uint32_t frame = 0;  // the posting call (leave kOpen: its Leave comes later)
  bool has_frame = false;
};

// A group's end grows to a posting's leave; an open posting's call is
// remembered, so that the next window can put its Leave in (close_open()).
void extend(Tail& g, const Posting& p) {
  if (p.leave < g.end) return;
  g.end = p.leave;
  g.has_open_frame = p.leave == kOpen && p.has_frame;
  g.open_frame = p.frame;
}

// Marks (out[item] = 1) every posting in a group of overlapping postings
// that spans several threads; `carried` is the last group of the window
// before (its postings are analyzed already).  Returns this window's last
// group.
Tail sweep(std::vector<Posting>& ps, const Tail* carried, std::vector<char>& out) {
  std::sort(ps.begin(), ps.end(), [](const Posting& a, const Posting& b) { return a.enter < b.enter; });
  Tail g = carried != nullptr ? *carried : Tail{INT64_MIN, 0};
  std::size_t first = 0;
  auto close = [&](std::size_t end) {
    if (g.location != Tail::kSeveral) return;
    for (std::size_t i = first; i < end; ++i) out[ps[i].item] = 1;
  };
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const Posting& p = ps[i];
    if (p.enter < g.end) {
      if (g.location != p.location) g.location = Tail::kSeveral;
      extend(g, p);
      continue;
    }
    close(i);
    g = {INT64_MIN, p.location};
    extend(g, p);
    first = i;
  }
  close(ps.size());
  return g;
}

// The window before's last groups that ended in a call still open at the
// cut end at that call's Leave, if it lies in this window `w` (else they
// stay open).  Without this, a call open at a cut (a blocking send that
// returned after it) held its envelope's group open for good, and every
// later posting of another thread on it was counted ambiguous
// (mpi.thread_ring with requested cuts: 57-168 messages per run).
void close_open(std::map<MsgKey, Tail>& tails, const LocationWindow& w, const LocationState& st) {
  std::map<std::uint32_t, std::vector<Tail*>> open;
  for (auto& [key, t] : tails) {
    if (t.end == kOpen && t.has_open_frame) open[t.open_frame].push_back(&t);
  }
  for (std::size_t i = 0; i < w.events.size() && !open.empty(); ++i) {
    if (w.events[i].kind != EventKind::Leave) continue;
    const auto it = open.find(st.annot[i].frame);
    if (it == open.end()) continue;
    for (Tail* t : it->second) {
      t->end = st.annot[i].leave;
      t->has_open_frame = false;
    }
    open.erase(it);
  }
}

// sweep() for each envelope, from the window before's last group on it;
// returns this window's last groups.
std::map<MsgKey, Tail> sweep_envelopes(std::map<MsgKey, std::vector<Posting>>& by_envelope,
                                       std::map<MsgKey, Tail>& carried, std::vector<char>& out,
                                       const LocationWindow& w, const LocationState& st) {
  close_open(carried, w, st);
  std::map<MsgKey, Tail> tails;
  for (auto& [key, ps] : by_envelope) {
    const auto c = carried.find(key);
    tails[key] = sweep(ps, c != carried.end() ? &c->second : nullptr, out);
  }
  return tails;
}

}  // namespace

bool Analyzer::Impl::detect_concurrency() const {
  if (!view_merged() || !defs.threads_share_mpi) return false;
  // The MPI calls of the view (each once: events of one call share its
  // enter), as postings of one envelope.
  std::vector<Posting> calls;
  std::int64_t last_enter = INT64_MIN;
  int last_location = Tail::kSeveral;
  for (std::size_t j = 0; j < merged.events.size(); ++j) {
    const EventAnnotation& a = merged_state.annot[j];
    if (a.callpath == kNoCallpath) continue;
    const RegionDef* rd = defs.region(callpaths.node(a.callpath).region);
    if (rd == nullptr || rd->kind != RegionKind::Mpi) continue;
    if (a.enter == last_enter && view_loc[j] == last_location) continue;
    last_enter = a.enter;
    last_location = view_loc[j];
    calls.push_back({a.enter, a.leave, view_loc[j], 0});
  }
  std::vector<char> any(1, 0);
  sweep(calls, nullptr, any);
  return any[0] != 0;
}

void Analyzer::Impl::flag_ambiguous_sends(const LocationWindow& w) {
  if (!view_merged() || !defs.threads_share_mpi) {
    send_tails.clear();
    return;
  }
  const LocationState& st = loc(w.location);
  std::vector<SendRecord*> records;
  std::map<MsgKey, std::vector<Posting>> by_envelope;
  for (auto& [dest, list] : outgoing) {
    for (SendRecord& r : list) {
      const std::size_t* ev = send_events.find(dest, r.seq);
      if (ev == nullptr) continue;
      const EventAnnotation& a = st.annot[*ev];
      by_envelope[{dest, r.comm_gid, r.tag}].push_back({a.enter, a.leave, origin(*ev), records.size(), a.frame, true});
      records.push_back(&r);
    }
  }
  std::vector<char> ambiguous(records.size(), 0);
  send_tails = sweep_envelopes(by_envelope, send_tails, ambiguous, w, st);
  for (std::size_t k = 0; k < records.size(); ++k) {
    if (ambiguous[k] != 0) records[k]->flags |= sendflag::kAmbiguous;
  }
}

std::vector<char> Analyzer::Impl::ambiguous_receives(const LocationWindow& w) {
  std::vector<char> ambiguous(completed.size(), 0);
  if (!view_merged() || !defs.threads_share_mpi) {
    recv_tails.clear();
    return ambiguous;
  }
  const LocationState& st = loc(w.location);
  std::map<MsgKey, std::vector<Posting>> by_envelope;
  for (std::size_t k = 0; k < completed.size(); ++k) {
    const CompletedRecv& cr = completed[k];
    auto [enter, leave] = posting_times(cr, st);
    // A receive posted by a call still open at the cut of a window before
    // (MPI_Irecv, whose Leave came after the cut): its end is not kept, and
    // open it would hold its envelope's group open for good (mpi.thread_ring
    // under load: 40-80 ambiguous messages).  The posting took effect in the
    // call; it is taken to end at its enter.
    if (leave == kOpen && cr.post_event == kNoEvent) leave = enter;
    Posting p{enter, leave, cr.post_location, k};
    if (cr.post_event != kNoEvent) {
      p.frame = st.annot[cr.post_event].frame;
      p.has_frame = true;
    }
    by_envelope[{cr.src, cr.comm_gid, cr.tag}].push_back(p);
  }
  recv_tails = sweep_envelopes(by_envelope, recv_tails, ambiguous, w, st);
  return ambiguous;
}

}  // namespace onlinews::analysis
