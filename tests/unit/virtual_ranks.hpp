// Hand-built event streams of several virtual ranks, replayed by the real
// Analyzer through the in-process transport (no MPI).  Times are given in
// seconds and stored in ns.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "inline_analysis/analysis.hpp"
#include "inline_analysis/local_transport.hpp"
#include "mpi_regions.gen.hpp"
#include "runtime/event.hpp"

namespace onlinews::test {

using analysis::Metric;
using rt::MpiRegion;

inline std::uint64_t ns(double seconds) { return static_cast<std::uint64_t>(std::llround(seconds * 1e9)); }

// Region ids after the MPI regions.
constexpr std::uint32_t kMain = rt::kMpiRegionCount;  // root region
constexpr std::uint32_t kWork = rt::kMpiRegionCount + 1;
constexpr std::uint32_t kSolve = rt::kMpiRegionCount + 2;

class VRank {
 public:
  VRank(int rank, int size) {
    defs.world_rank = rank;
    defs.world_size = size;
    rt::append_mpi_regions(defs.regions);
    defs.regions.push_back({"main", analysis::RegionKind::Root, {}, {}, 0, "", 0});
    defs.regions.push_back({"work", analysis::RegionKind::User, {}, {}, 0, "", 0});
    defs.regions.push_back({"solve", analysis::RegionKind::User, {}, {}, 0, "", 0});
    analysis::CommDef world;
    world.gid = 1;
    world.size = size;
    world.my_rank = rank;
    for (int r = 0; r < size; ++r) world.world_ranks.push_back(r);
    defs.comms.push_back(world);
  }
  // Adds a communicator (members in comm-rank order); returns its local id.
  std::uint16_t add_comm(std::uint64_t gid, const std::vector<int>& members) {
    analysis::CommDef c;
    c.gid = gid;
    c.size = static_cast<int>(members.size());
    c.world_ranks = members;
    for (int i = 0; i < c.size; ++i) {
      if (members[static_cast<std::size_t>(i)] == defs.world_rank) c.my_rank = i;
    }
    defs.comms.push_back(c);
    return static_cast<std::uint16_t>(defs.comms.size() - 1);
  }
  // A communicator over all ranks with a process topology: the world ranks
  // this rank receives from and sends to, in MPI's order (-1: MPI_PROC_NULL).
  std::uint16_t add_topology(std::uint64_t gid, const std::vector<int>& sources, const std::vector<int>& destinations) {
    std::vector<int> all;
    for (int r = 0; r < defs.world_size; ++r) all.push_back(r);
    const std::uint16_t id = add_comm(gid, all);
    defs.comms[id].sources = sources;
    defs.comms[id].destinations = destinations;
    defs.comms[id].has_topology = true;
    return id;
  }

  // (`team_size`: of an OpenMP implicit task, as the OMPT tool records it.)
  void enter(double t, std::uint32_t region, std::int32_t team_size = 0, std::uint64_t team = 0,
             std::uint8_t flags = 0) {
    events.push_back(Event::enter(ns(t), region, team_size, team, flags));
  }
  void leave(double t) { events.push_back(Event::leave(ns(t))); }
  // A region with nothing inside.
  void region(double t0, double t1, std::uint32_t r) {
    enter(t0, r);
    leave(t1);
  }
  void send(double t0, double t1, int dest, int tag = 0, std::uint64_t bytes = 8,
            std::uint32_t region = rt::kRegion_MPI_Send, std::uint8_t flags = 0, std::uint16_t comm = 0) {
    enter(t0, region);
    events.push_back(Event::message(EventKind::Send, ns(t0), comm, dest, tag, bytes, 0, flags));
    leave(t1);
  }
  void recv(double t0, double t1, int src, int tag = 0, std::uint16_t comm = 0) {
    enter(t0, rt::kRegion_MPI_Recv);
    events.push_back(Event::message(EventKind::Recv, ns(t1), comm, src, tag, 0));
    leave(t1);
  }
  // A probe (region MPI_Probe, or MPI_Mprobe for message != 0) that returns at t1.
  void probe(double t0, double t1, int src, int tag, std::uint32_t message = 0, std::uint16_t comm = 0) {
    enter(t0, message != 0 ? rt::kRegion_MPI_Mprobe : rt::kRegion_MPI_Probe);
    events.push_back(Event::message(EventKind::Probe, ns(t1), comm, src, tag, 0, message));
    leave(t1);
  }
  // MPI_Mrecv of a matched probe's message.
  void mrecv(double t0, double t1, int src, int tag, std::uint32_t message, std::uint16_t comm = 0) {
    enter(t0, rt::kRegion_MPI_Mrecv);
    events.push_back(Event::message(EventKind::Match, ns(t0), comm, src, tag, 0, message));
    events.push_back(Event::message(EventKind::Recv, ns(t1), comm, src, tag, 0));
    leave(t1);
  }
  void isend(double t0, double t1, int dest, int tag, std::uint64_t bytes, std::uint32_t req,
             std::uint8_t flags = 0, std::uint16_t comm = 0) {
    enter(t0, flags & evflag::kSynchronous ? rt::kRegion_MPI_Issend : rt::kRegion_MPI_Isend);
    events.push_back(Event::message(EventKind::SendRequest, ns(t0), comm, dest, tag, bytes, req, flags));
    leave(t1);
  }
  void irecv(double t0, double t1, int src, int tag, std::uint32_t req, std::uint16_t comm = 0) {
    enter(t0, rt::kRegion_MPI_Irecv);
    events.push_back(Event::message(EventKind::RecvRequest, ns(t0), comm, src, tag, 0, req));
    leave(t1);
  }
  // Completion call (Wait, Waitall, Test...) of the given requests; receives
  // list their actual (source, tag).
  struct Done {
    std::uint32_t req;
    bool recv;
    int src = 0, tag = 0;
  };
  void complete(double t0, double t1, std::uint32_t region, const std::vector<Done>& done, bool by_test = false,
                std::uint16_t comm = 0) {
    enter(t0, region);
    for (const auto& d : done) {
      const std::uint8_t f = by_test ? evflag::kByTest : 0;
      events.push_back(d.recv ? Event::message(EventKind::RecvComplete, ns(t1), comm, d.src, d.tag, 0, d.req, f)
                              : Event::message(EventKind::SendComplete, ns(t1), comm, 0, 0, 0, d.req, f));
    }
    leave(t1);
  }
  void coll(double t0, double t1, std::uint32_t region, int root = -1, std::uint64_t out = 8, std::uint64_t in = 8,
            std::uint16_t comm = 0) {
    enter(t0, region);
    events.push_back(Event::collective_end(ns(t1), comm, root, out, in));
    leave(t1);
  }
  // A nonblocking collective's start call (region e.g. MPI_Iallreduce) with
  // request `req`; `out` bytes sent, and whether this rank receives data.
  void istart(double t0, double t1, std::uint32_t region, std::uint32_t req, int root = -1, std::uint64_t out = 8,
              bool receives = true, std::uint16_t comm = 0) {
    enter(t0, region);
    events.push_back(Event::message(EventKind::CollStart, ns(t1), comm, root, next_start(comm), out, req,
                                    receives ? evflag::kCollReceives : 0));
    leave(t1);
  }
  // The Wait*/Test* (`region`) that completes the collective requests `reqs`.
  void icomplete(double t0, double t1, std::uint32_t region, const std::vector<std::uint32_t>& reqs,
                 std::uint16_t comm = 0, std::uint64_t in = 8) {
    enter(t0, region);
    for (std::uint32_t r : reqs) events.push_back(Event::message(EventKind::CollComplete, ns(t1), comm, -1, 0, in, r));
    leave(t1);
  }
  // A blocking neighborhood collective (its start and completion in one call).
  void neighbor(double t0, double t1, std::uint32_t region, std::uint16_t comm, std::uint64_t out = 8,
                std::uint64_t in = 8) {
    enter(t0, region);
    events.push_back(Event::message(EventKind::CollStart, ns(t1), comm, -1, next_start(comm), out, 0,
                                    evflag::kCollReceives));
    events.push_back(Event::message(EventKind::CollComplete, ns(t1), comm, -1, 0, in, 0));
    leave(t1);
  }
  // Ends the current epoch's window here (events before go to one epoch):
  // a synchronizing cut (right after a collective spanning all ranks), or a
  // requested one at time `t` (the same on every rank; place it between
  // calls, as the runtime's split does).
  // (A synchronizing boundary lies 1 ns past the last event, the cut
  // collective's Leave, as the runtime maps it.)
  void cut() {
    cuts.push_back(events.size());
    cut_times.push_back(0);
    cut_at_ns.push_back(events.empty() ? 0 : events.back().time + 1);
  }
  void requested_cut(double t) {
    cuts.push_back(events.size());
    cut_times.push_back(t);
    cut_at_ns.push_back(ns(t));
  }
  // A requested cut at time `t` in an already built stream, where the
  // runtime's split puts it: before the first event whose call group ends
  // at or after t (a call's completion events go with its Leave).
  void requested_cut_at(double t) {
    const std::uint64_t tn = ns(t);
    std::size_t i = events.size();
    std::uint64_t next_leave = UINT64_MAX;
    while (i > 0) {
      const Event& e = events[i - 1];
      if (e.kind == EventKind::Leave) next_leave = e.time;
      if ((completes_call(e.kind) ? next_leave : e.time) < tn) break;
      --i;
    }
    std::size_t k = 0;
    while (k < cuts.size() && cuts[k] <= i) ++k;
    cuts.insert(cuts.begin() + static_cast<std::ptrdiff_t>(k), i);
    cut_times.insert(cut_times.begin() + static_cast<std::ptrdiff_t>(k), t);
    cut_at_ns.insert(cut_at_ns.begin() + static_cast<std::ptrdiff_t>(k), ns(t));
  }

  // The events of another thread (location l >= 1), starting in the root
  // region at time 0 (its window: by time, up to the main stream's last
  // event before each cut).  Record into it, then switch back with on(0).
  VRank& on(int l) {
    if (l == 0) {
      if (thread_ != 0) std::swap(events, threads[static_cast<std::size_t>(thread_ - 1)]);
      thread_ = 0;
      return *this;
    }
    on(0);
    if (threads.size() < static_cast<std::size_t>(l)) threads.resize(static_cast<std::size_t>(l));
    auto& t = threads[static_cast<std::size_t>(l - 1)];
    if (t.empty()) t.push_back(Event::enter(0, kMain));
    std::swap(events, t);
    thread_ = l;
    return *this;
  }

  // The runtime's number of the next collective start on `comm`.
  std::int32_t next_start(std::uint16_t comm) {
    if (comm >= starts_.size()) starts_.resize(comm + 1u, 0);
    return starts_[comm]++;
  }

  analysis::Definitions defs;
  std::vector<Event> events;
  std::vector<std::vector<Event>> threads;  // locations 1, 2, ...
  std::vector<std::size_t> cuts;
  std::vector<double> cut_times;  // 0: synchronizing
  std::vector<std::uint64_t> cut_at_ns;  // each boundary's time (WindowBounds)
  std::uint64_t dropped = 0;  // events "lost" in the first window

 private:
  int thread_ = 0;
  std::vector<std::int32_t> starts_;
};

// Inclusive value of `m` summed over all call paths whose region is `region`
// (kAnyRegion: all call paths), location 0.
constexpr std::uint32_t kAnyRegion = 0xffffffffu;
inline double value(const analysis::Analyzer& a, Metric m, std::uint32_t region = kAnyRegion, int location = 0) {
  double v = 0;
  const auto& cps = a.callpaths();
  for (std::uint32_t cp = 0; cp < cps.size(); ++cp) {
    if (region == kAnyRegion || cps.node(cp).region == region) v += a.profile().run_value(location, cp, m);
  }
  return v;
}

struct RankResult {
  double get(Metric m, std::uint32_t region = kAnyRegion) const { return value(*analyzer, m, region); }
  // ... of location (thread) `l`.
  double get_at(int l, Metric m, std::uint32_t region = kAnyRegion) const { return value(*analyzer, m, region, l); }
  std::unique_ptr<analysis::Analyzer> analyzer;
  std::vector<analysis::EpochFacts> facts;
};

// Replays every rank's stream (split at its cuts: all ranks need the same
// number of cuts) and returns each rank's analyzer.  The virtual ranks run
// as coroutines in one thread; `world` picks the order in which their steps
// complete (LocalWorld::Options: seed, scramble).
// `ticks`, if given, receives the resumptions the run took (LocalWorld::ticks).
// `min_traced_wait`: AnalysisOptions::min_traced_wait (0: trace every wait).
inline std::vector<RankResult> replay(std::vector<VRank>& ranks, std::vector<std::string> selection = {"all"},
                                      analysis::LocalWorld::Options world_options = {},
                                      std::uint64_t* ticks = nullptr, double min_traced_wait = 0) {
  const int n = static_cast<int>(ranks.size());
  std::vector<RankResult> out(static_cast<std::size_t>(n));
  analysis::LocalWorld world(n, world_options);
  world.run([&](int r, analysis::Transport& t) -> analysis::Task<> {
    VRank& vr = ranks[static_cast<std::size_t>(r)];
    vr.on(0);
    std::vector<std::size_t> thread_at(vr.threads.size(), 0);
    analysis::AnalysisOptions o;
    o.selection = selection;
    o.min_traced_wait = min_traced_wait;
    auto a = std::make_unique<analysis::Analyzer>(vr.defs, o);
    std::size_t begin = 0;
    auto ends = vr.cuts;
    auto times = vr.cut_times;
    auto at_ns = vr.cut_at_ns;
    ends.push_back(vr.events.size());
    times.push_back(0);
    at_ns.push_back(0);
    analysis::WindowBounds b;
    for (std::size_t k = 0; k < ends.size(); ++k) {
      std::vector<analysis::LocationWindow> w(1 + vr.threads.size());
      w[0].location = 0;
      w[0].events.assign(vr.events.begin() + static_cast<std::ptrdiff_t>(begin),
                         vr.events.begin() + static_cast<std::ptrdiff_t>(ends[k]));
      const bool last = k + 1 == ends.size();
      // (A requested cut's threads end before its time; a synchronizing
      // cut's with the main stream's last event.)
      const std::uint64_t until = times[k] > 0          ? ns(times[k]) - 1
                                  : w[0].events.empty() ? 0
                                                        : w[0].events.back().time;
      for (std::size_t l = 0; l < vr.threads.size(); ++l) {
        const auto& te = vr.threads[l];
        std::size_t& at = thread_at[l];
        w[l + 1].location = static_cast<int>(l + 1);
        while (at < te.size() && (last || te[at].time <= until)) w[l + 1].events.push_back(te[at++]);
      }
      w[0].dropped = begin == 0 ? vr.dropped : 0;
      b.ends_synchronized = times[k] == 0;
      b.last = last;
      b.end = static_cast<std::int64_t>(at_ns[k]);
      out[static_cast<std::size_t>(r)].facts.push_back(co_await a->run_epoch(w, t, b));
      b.starts_synchronized = b.ends_synchronized;
      b.begin = b.end;
      begin = ends[k];
    }
    out[static_cast<std::size_t>(r)].analyzer = std::move(a);
  });
  if (ticks != nullptr) *ticks = world.ticks();
  return out;
}

// n virtual ranks, each already inside its root region at t = 0.
inline std::vector<VRank> make_ranks(int n) {
  std::vector<VRank> v;
  for (int r = 0; r < n; ++r) {
    v.emplace_back(r, n);
    v.back().enter(0.0, kMain);
  }
  return v;
}

}  // namespace onlinews::test
