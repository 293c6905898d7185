// Epoch analysis cost per event: the real replay on synthetic windows of two
// virtual ranks (in-process transport), per-event time reported.  Each
// iteration of the synthetic program: user region, Isend/Irecv/Waitall
// exchange, blocking Send/Recv ping-pong, and an Allreduce every 100th.
#include <benchmark/benchmark.h>

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

Stream make_stream(int rank, int iterations) {
  Stream s;
  s.defs.world_rank = rank;
  s.defs.world_size = 2;
  rt::append_mpi_regions(s.defs.regions);
  const std::uint32_t main_region = static_cast<std::uint32_t>(s.defs.regions.size());
  s.defs.regions.push_back({"main", analysis::RegionKind::Root, {}, {}, 0, "", 0});
  s.defs.regions.push_back({"work", analysis::RegionKind::User, {}, {}, 0, "", 0});
  analysis::CommDef w;
  w.gid = 1;
  w.size = 2;
  w.my_rank = rank;
  w.world_ranks = {0, 1};
  s.defs.comms.push_back(w);
  auto& e = s.events;
  std::uint64_t t = 1000;
  const int peer = 1 - rank;
  e.push_back(Event::enter(t, main_region));
  std::uint32_t req = 1;
  for (int i = 0; i < iterations; ++i) {
    e.push_back(Event::enter(t += 100, main_region + 1));
    e.push_back(Event::leave(t += 500));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Irecv));
    e.push_back(Event::message(EventKind::RecvRequest, t, 0, peer, 1, 0, req));
    e.push_back(Event::leave(t += 10));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Isend));
    e.push_back(Event::message(EventKind::SendRequest, t, 0, peer, 1, 8, req + 1));
    e.push_back(Event::leave(t += 10));
    e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Waitall));
    e.push_back(Event::message(EventKind::RecvComplete, t + 50, 0, peer, 1, 0, req));
    e.push_back(Event::message(EventKind::SendComplete, t + 50, 0, peer, 1, 8, req + 1));
    e.push_back(Event::leave(t += 60));
    req += 2;
    if (rank == 0) {
      e.push_back(Event::enter(t += 10, rt::kRegion_MPI_Send));
      e.push_back(Event::message(EventKind::Send, t, 0, peer, 2, 8));
      e.push_back(Event::leave(t += 10));
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
  return s;
}

// Steady state, as in a run: each rank's Analyzer lives across epochs (its
// buffers are reused); every benchmark iteration is one more epoch.
void replay_epochs(benchmark::State& state, const std::vector<std::string>& selection) {
  const int iterations = static_cast<int>(state.range(0));
  Stream s[2] = {make_stream(0, iterations), make_stream(1, iterations)};
  std::unique_ptr<analysis::Analyzer> an[2];
  std::vector<analysis::LocationWindow> w[2];
  analysis::LocalWorld world(2);
  for (int r = 0; r < 2; ++r) {
    analysis::AnalysisOptions o;
    o.selection = selection;
    an[r] = std::make_unique<analysis::Analyzer>(s[r].defs, o);
    w[r].resize(1);
  }
  std::size_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (int r = 0; r < 2; ++r) w[r][0].events = s[r].events;
    state.ResumeTiming();
    world.run([&](int r, analysis::Transport& t) { an[r]->run_epoch(w[r], t); });
    events += s[0].events.size();
  }
  state.counters["ns_per_event"] =
      benchmark::Counter(static_cast<double>(events) * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// Everything (wait states, delay costs, critical path)...
void BM_ReplayEpoch(benchmark::State& state) { replay_epochs(state, {"all"}); }
// ... and the wait states only (no backward replay at synchronization points).
void BM_ReplayEpochWaitStatesOnly(benchmark::State& state) { replay_epochs(state, {"p2p", "collective"}); }
BENCHMARK(BM_ReplayEpoch)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayEpochWaitStatesOnly)->Arg(20000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
