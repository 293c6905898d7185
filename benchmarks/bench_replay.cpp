// Epoch analysis cost per event: the real replay on synthetic windows of
// virtual ranks (in-process transport), per-event time reported.  Both ranks'
// analyses run on this one thread, so the time per event and rank is the
// iteration's time over the events of both ranks (`ns_per_event_and_rank`;
// until 2026-11-28 the counter divided by one rank's events and so reported
// twice that).  Each
// iteration of the synthetic program: user region, Isend/Irecv/Waitall
// exchange (rank 1 waits in it), blocking Send/Recv, and an Allreduce every
// 100th.  Both ranks' clocks agree (no receive precedes its send) unless a variant
// skews rank 1's clock: then every receive of rank 1 violates the clock
// condition and the epoch pays for the full correction.  A wavefront on 4
// virtual ranks (make_wavefront) is the backward replay's hard case.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "inline_analysis/analysis.hpp"
#include "inline_analysis/local_transport.hpp"
#include "mpi_regions.gen.hpp"

using namespace onlinews;

namespace {

struct Stream {
  analysis::Definitions defs;
  std::vector<Event> events;
};

// Rank `rank` of `ranks`: the MPI regions, then "main" (returned) and a
// user region `user` after it, and MPI_COMM_WORLD.
std::uint32_t define(Stream& s, int rank, int ranks, const char* user) {
  s.defs.world_rank = rank;
  s.defs.world_size = ranks;
  rt::append_mpi_regions(s.defs.regions);
  const std::uint32_t main_region = static_cast<std::uint32_t>(s.defs.regions.size());
  s.defs.regions.push_back({"main", analysis::RegionKind::Root, {}, {}, 0, "", 0});
  s.defs.regions.push_back({user, analysis::RegionKind::User, {}, {}, 0, "", 0});
  analysis::CommDef w;
  w.gid = 1;
  w.size = ranks;
  w.my_rank = rank;
  for (int r = 0; r < ranks; ++r) w.world_ranks.push_back(r);
  s.defs.comms.push_back(w);
  return main_region;
}

Stream make_stream(int rank, int iterations, std::uint64_t skew_ns = 0) {
  Stream s;
  const std::uint32_t main_region = define(s, rank, 2, "work");
  auto& e = s.events;
  std::uint64_t t = 1000;
  const int peer = 1 - rank;
  e.push_back(Event::enter(t, main_region));
  std::uint32_t req = 1;
  for (int i = 0; i < iterations; ++i) {
    // Rank 1 works 300 ns less and so waits in its Waitall (Late Sender):
    // one wait state per iteration, for the root-cause analysis to explain.
    const std::uint64_t lag = rank == 1 ? 300 : 0;
    e.push_back(Event::enter(t += 100, main_region + 1));
    e.push_back(Event::leave(t += 500 - lag));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Irecv));
    e.push_back(Event::message(EventKind::RecvRequest, t, 0, peer, 1, 0, req));
    e.push_back(Event::leave(t += 10));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Isend));
    e.push_back(Event::message(EventKind::SendRequest, t, 0, peer, 1, 8, req + 1));
    e.push_back(Event::leave(t += 10));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Waitall));
    e.push_back(Event::message(EventKind::RecvComplete, t + lag + 50, 0, peer, 1, 0, req));
    e.push_back(Event::message(EventKind::SendComplete, t + lag + 50, 0, peer, 1, 8, req + 1));
    e.push_back(Event::leave(t += lag + 60));
    req += 2;
    if (rank == 0) {
      e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Send));
      e.push_back(Event::message(EventKind::Send, t, 0, peer, 2, 8));
      e.push_back(Event::leave(t += 15));  // as long as the receive: the ranks stay in step
    } else {
      e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Recv));
      e.push_back(Event::message(EventKind::Recv, t += 15, 0, peer, 2, 0));
      e.push_back(Event::leave(t));
    }
    if (i % 100 == 99) {
      e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Allreduce));
      e.push_back(Event::collective_end(t += 20, 0, -1, 8, 8));
      e.push_back(Event::leave(t));
    }
  }
  e.push_back(Event::leave(t += 10));
  if (rank == 1) {
    for (auto& ev : e) ev.time -= skew_ns;
  }
  return s;
}

// A wavefront (the sweep proxy's pattern, one direction): rank r receives
// each block from r - 1, works 1 us on it in a user region (rank 0: 2 us)
// and sends it on to r + 1; every 128 blocks an Allreduce.  Every receive
// is a Late Sender of ~1 us whose cause is rank 0's extra work, so the
// backward replay passes long-term delay costs down chains as long as the
// pipeline.
Stream make_wavefront(int rank, int ranks, int blocks) {
  Stream s;
  const std::uint32_t main_region = define(s, rank, ranks, "solve");
  // Times of every rank's sends, simulated in the pipeline's order (the
  // same on every rank: each stream needs its upstream neighbour's).
  constexpr std::uint64_t kWork = 1000, kCall = 20, kLatency = 200;
  std::vector<std::uint64_t> free_at(static_cast<std::size_t>(ranks), 1000), sent(static_cast<std::size_t>(ranks));
  auto& e = s.events;
  e.push_back(Event::enter(1000, main_region));
  for (int b = 0; b < blocks; ++b) {
    for (int r = 0; r < ranks; ++r) {
      const std::size_t ur = static_cast<std::size_t>(r);
      std::uint64_t t = free_at[ur];
      std::uint64_t arrive = 0;
      const bool mine = r == rank;
      if (r > 0) {
        if (mine) e.push_back(Event::enter(t, rt::kRegion_MPI_Recv));
        arrive = std::max(t + kCall, sent[ur - 1] + kLatency);
        if (mine) {
          e.push_back(Event::message(EventKind::Recv, arrive, 0, r - 1, b, 0));
          e.push_back(Event::leave(arrive));
        }
        t = arrive;
      }
      t += 5;
      if (mine) e.push_back(Event::enter(t, main_region + 1));
      t += r == 0 ? 2 * kWork : kWork;
      if (mine) e.push_back(Event::leave(t));
      if (r + 1 < ranks) {
        t += 5;
        if (mine) {
          e.push_back(Event::enter(t, rt::kRegion_MPI_Send));
          e.push_back(Event::message(EventKind::Send, t, 0, r + 1, b, 8));
        }
        sent[ur] = t;
        t += kCall;
        if (mine) e.push_back(Event::leave(t));
      }
      free_at[ur] = t;
    }
    if (b % 128 == 127) {
      std::uint64_t last = 0;
      for (std::uint64_t f : free_at) last = std::max(last, f);
      const std::size_t me = static_cast<std::size_t>(rank);
      e.push_back(Event::enter(free_at[me] + 5, rt::kRegion_MPI_Allreduce));
      e.push_back(Event::collective_end(last + 100, 0, -1, 8, 8));
      e.push_back(Event::leave(last + 100));
      for (std::uint64_t& f : free_at) f = last + 110;
    }
  }
  e.push_back(Event::leave(free_at[static_cast<std::size_t>(rank)] + 10));
  return s;
}

// Steady state, as in a run: each rank's Analyzer lives across epochs (its
// buffers are reused); every benchmark iteration is one more epoch of the
// ranks' streams `s`.
void replay_streams(benchmark::State& state, const std::vector<Stream>& s, const std::vector<std::string>& selection) {
  const std::size_t n = s.size();
  std::vector<std::unique_ptr<analysis::Analyzer>> an;
  std::vector<std::vector<analysis::LocationWindow>> w(n);
  for (std::size_t r = 0; r < n; ++r) {
    analysis::AnalysisOptions o;
    o.selection = selection;
    an.push_back(std::make_unique<analysis::Analyzer>(s[r].defs, o));
    w[r].resize(1);
  }
  analysis::LocalWorld world(static_cast<int>(n));
  std::size_t events = 0;
  std::vector<analysis::EpochFacts> facts(n);
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t r = 0; r < n; ++r) w[r][0].events = s[r].events;
    state.ResumeTiming();
    world.run([&](int r, analysis::Transport& t) -> analysis::Task<> {
      const auto k = static_cast<std::size_t>(r);
      facts[k] = co_await an[k]->run_epoch(w[k], t);
    });
    for (const Stream& x : s) events += x.events.size();
  }
  double violations = 0;
  for (const analysis::EpochFacts& f : facts) violations += static_cast<double>(f.clock_violations);
  state.counters["violations"] = violations;
  state.counters["ns_per_event_and_rank"] =
      benchmark::Counter(static_cast<double>(events) * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// The two ranks' loop, `range(0)` iterations per epoch.
void replay_epochs(benchmark::State& state, const std::vector<std::string>& selection, std::uint64_t skew_ns = 0) {
  const int iterations = static_cast<int>(state.range(0));
  replay_streams(state, {make_stream(0, iterations), make_stream(1, iterations, skew_ns)}, selection);
}
// Everything (wait states, delay costs, critical path)...
void BM_ReplayEpoch(benchmark::State& state) { replay_epochs(state, {"all"}); }
// ... and the wait states only (no backward replay at synchronization points).
void BM_ReplayEpochWaitStatesOnly(benchmark::State& state) { replay_epochs(state, {"p2p", "collective"}); }
// Everything, with rank 1's clock 100 ns early: 40000 violations per epoch.
void BM_ReplayEpochClockViolations(benchmark::State& state) { replay_epochs(state, {"all"}, 100); }
// The wavefront on 4 virtual ranks, `range(0)` blocks per epoch.
void replay_wavefront(benchmark::State& state, const std::vector<std::string>& selection) {
  constexpr int kRanks = 4;
  std::vector<Stream> s;
  for (int r = 0; r < kRanks; ++r) s.push_back(make_wavefront(r, kRanks, static_cast<int>(state.range(0))));
  replay_streams(state, s, selection);
}
void BM_ReplayWavefront(benchmark::State& state) { replay_wavefront(state, {"all"}); }
void BM_ReplayWavefrontWaitStatesOnly(benchmark::State& state) { replay_wavefront(state, {"p2p", "collective"}); }
BENCHMARK(BM_ReplayEpoch)->Arg(1000)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayEpochWaitStatesOnly)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayEpochClockViolations)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayWavefront)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayWavefrontWaitStatesOnly)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
