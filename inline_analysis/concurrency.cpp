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
};

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
      g.end = std::max(g.end, p.leave);
      continue;
    }
    close(i);
    g = {p.leave, p.location};
    first = i;
  }
  close(ps.size());
  return g;
}

// sweep() for each envelope, from the window before's last group on it;
// returns this window's last groups.
std::map<MsgKey, Tail> sweep_envelopes(std::map<MsgKey, std::vector<Posting>>& by_envelope,
                                       const std::map<MsgKey, Tail>& carried, std::vector<char>& out) {
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
      by_envelope[{dest, r.comm_gid, r.tag}].push_back({a.enter, a.leave, origin(*ev), records.size()});
      records.push_back(&r);
    }
  }
  std::vector<char> ambiguous(records.size(), 0);
  send_tails = sweep_envelopes(by_envelope, send_tails, ambiguous);
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
    const auto [enter, leave] = posting_times(cr, st);
    by_envelope[{cr.src, cr.comm_gid, cr.tag}].push_back({enter, leave, cr.post_location, k});
  }
  recv_tails = sweep_envelopes(by_envelope, recv_tails, ambiguous);
  return ambiguous;
}

}  // namespace onlinews::analysis
