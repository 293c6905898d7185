// Nonblocking collectives (and blocking neighborhood ones) as
// synchronizations at their completion (DESIGN.md §6; docs/analyses.md,
// "Nonblocking and neighborhood collectives").
//
// An instance starts with a CollStart (the start call) and ends with a
// CollComplete (in the Wait*/Test* that completed its request, or in the
// blocking neighborhood call itself).  What its completion waited for is a
// start of another member: the latest member's (barrier, N x N), the
// root's (1-to-N), the latest sender's (N-to-1, at the root), the latest
// source neighbor's (neighborhood kinds).  Starts on a communicator come in
// the same order on every member, so the runtime numbers them per
// communicator (CollStart's tag): the k-th is the same instance everywhere,
// whatever events a window lost.
//
// Starts and completions may lie in different windows, and a requested cut
// may fall between two members' starts: an instance stays open (NbState)
// until every member has started it (one reduction per communicator over
// the instances every member has seen started, agreed in agree_comms) and its
// completion is known; neighborhood starts travel to the neighbors that
// receive from them in a sparse exchange instead.  Then the patterns get it
// (Pattern::on_nb_collectives), in that epoch.  So an instance carried
// across a cut is analyzed like a crossing message, in the later epoch; its
// wait is exact, and it is explained (delay costs, critical path) only if
// its completion and the start it waited for lie in the same epoch (else it
// counts as an unexplained pair, EpochFacts::unexplained_rma_waits).
// A nonblocking collective is never a cut: only blocking collectives
// spanning all ranks are (runtime/hooks_coll.cpp).
#include <algorithm>
#include <climits>
#include <set>

#include "engine.hpp"

namespace onlinews::analysis {
namespace {

std::int64_t pack(const EventRef& r) { return (static_cast<std::int64_t>(r.epoch) << 32) | r.event; }
EventRef unpack(std::int64_t rank, std::int64_t v) {
  if (rank < 0 || rank == INT64_MAX || v < 0) return {};
  return {static_cast<std::int32_t>(rank), static_cast<std::uint32_t>(v >> 32),
          static_cast<std::uint32_t>(v & 0xffffffff)};
}

// The distinct neighbors in `peers` other than this rank (world ranks).
std::vector<int> distinct_peers(const std::vector<int>& peers, int me) {
  std::vector<int> v;
  for (int p : peers) {
    if (p >= 0 && p != me) v.push_back(p);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

void Analyzer::Impl::collect_nb(const Event& e, const LocationState& st, std::size_t i, const CommDef* c) {
  if (c == nullptr || !c->usable || c->my_rank < 0) return;
  // (Another thread used the communicator: its instances are left out.)
  if (c->mixed_collective || mixed_collective.count(c->gid) != 0) return;
  if (e.kind == EventKind::CollStart) {
    const RegionDef* rd = defs.region(callpaths.node(st.annot[i].callpath).region);
    // The runtime's 32-bit number, extended from the next one expected.
    std::uint64_t& next = nb_numbered[c->gid];
    const std::uint64_t number =
        next + static_cast<std::uint32_t>(static_cast<std::uint32_t>(e.tag) - static_cast<std::uint32_t>(next));
    next = number + 1;
    const NbKey key{c->gid, number};
    NbState& s = nb_open[key];
    s = NbState{};
    s.comm = e.comm;
    s.kind = rd != nullptr ? rd->coll : CollKind::None;
    s.root_rank = e.peer;
    s.root = e.peer >= 0 && e.peer == c->my_rank;
    s.sends = e.bytes > 0;
    s.receives = (e.flags & evflag::kCollReceives) != 0;
    s.blocking = e.request == 0;
    s.location = origin(i);
    s.start_event = i;
    if (e.request != 0) {
      nb_requests[e.request] = key;
    } else {
      nb_blocking = key;
    }
    nb_new_neighbor_starts = nb_new_neighbor_starts || s.kind == CollKind::Neighbor;
    return;
  }
  // CollComplete: its request's instance, or the blocking call's.
  std::optional<NbKey> key;
  if (e.request != 0) {
    const auto it = nb_requests.find(e.request);
    if (it != nb_requests.end()) {
      key = it->second;
      nb_requests.erase(it);
    }
  } else {
    key = nb_blocking;
    nb_blocking.reset();
  }
  if (!key) return;
  const auto it = nb_open.find(*key);
  if (it == nb_open.end()) return;
  it->second.completion_event = i;
  it->second.location = origin(i);
  // (A successful Test* is no blocking wait, as for Late Sender.)
  it->second.by_test = (e.flags & evflag::kByTest) != 0;
}

void Analyzer::Impl::forget_nb() {
  // Lost events: open instances may miss their start or completion.  The
  // numbering goes on (the runtime's), so later instances pair up again.
  nb_open.clear();
  nb_requests.clear();
  nb_blocking.reset();
  nb_arrived.clear();
  nb_charged.clear();
  for (std::uint64_t gid : nb_retired) {
    nb_numbered.erase(gid);
    nb_reduced.erase(gid);
  }
  nb_retired.clear();
}

Task<> Analyzer::Impl::reduce_nb(Transport& t, bool neighbor_exchange) {
  nb_results.clear();
  const int me = defs.world_rank;
  const LocationState& st = loc(view->location);
  // This window's calls, with their times after clock correction.
  for (auto& [key, s] : nb_open) {
    if (s.start_event != kNoEvent) s.start = call_at(st, s.start_event);
    if (s.completion_event != kNoEvent) s.completion = call_at(st, s.completion_event);
    s.start_event = s.completion_event = kNoEvent;
  }
  // One reduction per communicator (in increasing gid on every member) over
  // the instances every member has started and not yet reduced.
  std::vector<std::pair<std::uint64_t, std::uint16_t>> order;
  for (const auto& [id, agreed] : nb_agreed) {
    const CommDef& c = defs.comms[id];
    if (agreed > nb_reduced[c.gid]) order.emplace_back(c.gid, id);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [gid, id] : order) {
    const CommDef& c = defs.comms[id];
    const std::uint64_t lo = nb_reduced[gid], hi = nb_agreed[id];
    // Every member reduces the same hi - lo records: a neutral one where it
    // holds no start (lost with its window's events; then the instance is
    // incomplete: min_leave, a presence flag here, ends 0).
    std::vector<NbState*> open;
    std::vector<CollRecord> recs;
    for (std::uint64_t k = lo; k < hi; ++k) {
      const auto it = nb_open.find({gid, k});
      NbState* s = it == nb_open.end() || !it->second.start.at.valid() ? nullptr : &it->second;
      CollRecord r{INT64_MIN, INT64_MAX, 0, INT64_MIN, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX, -1, -1, -1};
      if (s != nullptr) {
        const std::int64_t at = pack(s->start.at), t0 = s->start.enter;
        r.max_enter = t0;
        r.max_enter_rank = me;
        r.max_enter_at = at;
        r.min_leave = 1;
        if (s->root) {
          r.root_enter = t0;
          r.root_at = at;
          // The root's data: what it sends (1-to-N) or receives (N-to-1).
          r.root_bytes = (s->kind == CollKind::NToOne ? s->receives : s->sends) ? 1 : 0;
        }
        if (s->sends) {
          r.max_sender_enter = t0;
          r.max_sender_rank = me;
          r.max_sender_at = at;
        }
        r.min_enter = t0;
      }
      open.push_back(s);
      recs.push_back(r);
    }
    if (!recs.empty() && c.size > 1) co_await t.allreduce(c, recs.data(), recs.size());
    for (std::size_t k = 0; k < open.size(); ++k) {
      if (open[k] == nullptr) continue;
      open[k]->all = recs[k];
      open[k]->reduced = true;
    }
    nb_reduced[gid] = hi;
  }
  // Neighborhood starts to the neighbors that receive from this rank.
  if (neighbor_exchange) {
    std::map<int, std::vector<NbStartRecord>> out;
    for (auto& [key, s] : nb_open) {
      if (s.kind != CollKind::Neighbor || s.sent || !s.start.at.valid()) continue;
      s.sent = true;
      const CommDef* c = defs.comm(s.comm);
      if (c == nullptr) continue;
      for (int d : distinct_peers(c->destinations, me)) {
        out[d].push_back({key.first, key.second, s.start.enter, s.start.at.epoch, s.start.at.event});
      }
    }
    for (const auto& [peer, list] : co_await exchange_records(t, out)) {
      for (const NbStartRecord& r : list) {
        NbArrived& a = nb_arrived[{r.gid, r.number}];
        ++a.count;
        if (r.enter > a.latest) {
          a.latest = r.enter;
          a.at = {peer, r.epoch, r.event};
        }
      }
    }
  }
  // Instances whose completion and causes are known go to the patterns
  // (those on a communicator another thread used are dropped, as its
  // blocking ones are).
  for (auto it = nb_open.begin(); it != nb_open.end();) {
    NbState& s = it->second;
    if (mixed_collective.count(it->first.first) != 0) {
      it = nb_open.erase(it);
      continue;
    }
    const CommDef* c = defs.comm(s.comm);
    bool ready = s.completion.at.valid() && c != nullptr;
    NbCollectiveResult r;
    std::int64_t cause = INT64_MIN;  // the start it waited for (none)
    if (ready && s.kind == CollKind::Neighbor) {
      // (Every source's start must have come, also after a Test*: else it
      // would arrive for an instance that is gone.)
      const auto sources = distinct_peers(c->sources, me);
      const auto a = nb_arrived.find(it->first);
      const int count = a == nb_arrived.end() ? 0 : a->second.count;
      ready = count >= static_cast<int>(sources.size());
      if (ready && a != nb_arrived.end()) {
        if (!s.by_test) {
          cause = a->second.latest;
          r.cause_at = a->second.at;
        }
        nb_arrived.erase(a);
      }
    } else if (ready) {
      ready = s.reduced;
      const CollRecord& all = s.all;
      // (Every member's start known: the presence flag stayed 1.)
      if (ready && all.min_leave == 1 && !s.by_test) {
        switch (s.kind) {
          case CollKind::Barrier:
            cause = all.max_enter;
            r.cause_at = unpack(all.max_enter_rank, all.max_enter_at);
            break;
          case CollKind::NxN:  // (a member that moves no data is not analyzed, as for blocking ones)
            if (s.sends || s.receives) {
              cause = all.max_enter;
              r.cause_at = unpack(all.max_enter_rank, all.max_enter_at);
            }
            break;
          case CollKind::OneToN:  // a receiving non-root waits for the root to start sending
            if (!s.root && s.receives && all.root_bytes > 0) {
              cause = all.root_enter;
              r.cause_at = unpack(c->world_rank_of(s.root_rank), all.root_at);
            }
            break;
          case CollKind::NToOne:  // a receiving root waits for the latest sender
            if (s.root && all.root_bytes > 0) {
              cause = all.max_sender_enter;
              r.cause_at = unpack(all.max_sender_rank, all.max_sender_at);
            }
            break;
          default:  // Iscan, Iexscan: time only (docs/analyses.md)
            break;
        }
      }
    }
    if (!ready) {
      ++it;
      continue;
    }
    r.location = s.location;
    r.kind = s.kind;
    r.blocking = s.blocking;
    r.completion = s.completion;
    // (The whole wait for now; shared out per call below.)
    r.wait = cause == INT64_MIN ? 0.0 : std::max(0.0, secs(std::min(cause, s.completion.leave) - s.completion.enter));
    nb_results.push_back(r);
    it = nb_open.erase(it);
  }
  // A call that completed several instances waited for the latest start:
  // that instance gets the call's wait, less what an instance of it that
  // became ready in an earlier epoch was charged already.
  using CallKey = std::tuple<int, std::int64_t, std::uint32_t>;
  auto call_of = [this](std::size_t i) {
    const NbCollectiveResult& r = nb_results[i];
    return CallKey{r.location, r.completion.enter, r.completion.callpath};
  };
  std::vector<std::size_t> by_call(nb_results.size());
  for (std::size_t i = 0; i < by_call.size(); ++i) by_call[i] = i;
  std::sort(by_call.begin(), by_call.end(), [&](std::size_t a, std::size_t b) {
    return call_of(a) != call_of(b) ? call_of(a) < call_of(b) : nb_results[a].wait > nb_results[b].wait;
  });
  for (std::size_t k = 0; k < by_call.size(); ++k) {
    NbCollectiveResult& r = nb_results[by_call[k]];
    if (k > 0 && call_of(by_call[k]) == call_of(by_call[k - 1])) {
      r.wait = 0;
      continue;
    }
    double& charged = nb_charged[call_of(by_call[k])];
    const double whole = r.wait;
    r.wait = std::max(0.0, whole - charged);
    charged = std::max(charged, whole);
  }
  // Calls with no instance left open are done.
  std::set<CallKey> open_calls;
  for (const auto& [key, s] : nb_open) {
    if (s.completion.at.valid()) open_calls.insert({s.location, s.completion.enter, s.completion.callpath});
  }
  for (auto it = nb_charged.begin(); it != nb_charged.end();) {
    it = open_calls.count(it->first) != 0 ? std::next(it) : nb_charged.erase(it);
  }
  for (std::uint64_t gid : nb_retired) {  // every member freed the communicator
    nb_numbered.erase(gid);
    nb_reduced.erase(gid);
  }
  nb_retired.clear();
}

}  // namespace onlinews::analysis
