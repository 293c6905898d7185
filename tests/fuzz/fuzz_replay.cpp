// libFuzzer target: the analysis (inline_analysis/) fed with random event
// streams through the in-process transport (tests/unit/virtual_ranks.hpp).
// The input bytes are read as a program of 2-5 virtual ranks, and a small
// simulator of MPI's semantics gives every call its times:
//   compute        a rank works 0.5-128 ms (region "work");
//   send/recv      blocking, standard or synchronous; a receive ends 1 us
//                  after max(its enter, the send's enter), or up to 3.2 ms
//                  later (a receiver that lost its core: the path runs on
//                  it from the send to its return);
//   probe + recv   the probe ends as a receive would, the receive follows
//                  (for a synchronous send after some work: the send
//                  waits for it, Late Receiver after the probe's wait);
//   isend/irecv    the receiver works a while, then waits in MPI_Wait
//                  (which may return late too);
//   collectives    Barrier, Allreduce, Bcast on all ranks (a synchronizing
//                  cut after some of them), Allreduce on ranks 0..n-2;
// then requested cuts at random times (inside a collective that a
// synchronizing cut follows, on each rank no later than its enter, as the
// runtime applies them; none in MPI_Finalize's), half of them half a
// microsecond after an event.  What must hold (else the target traps):
//   * the replay ends (the in-process driver throws on a deadlock), in one
//     epoch and with the cuts, whatever order its steps complete in
//     (LocalWorld's scramble, seeded from the input);
//   * the wait states and the critical path with the cuts equal those of
//     one epoch (collective wait states only when no requested cut split a
//     collective: those are left out, and counted; the critical path only
//     when no two calls that meet were entered at the same ns, nor an
//     instance split, nor a Late Receiver lost (a synchronous send that
//     returned before its receive's window: crossing_sync_sends, and the
//     metric no higher), nor where the analysis counted some of it as
//     approximate (approximate_path_seconds, no upper estimate of how far
//     the path moves: docs/design.md);
//   * one epoch's wait states equal what the simulator built: Late Sender
//     (blocking receives and waits), Late Receiver (synchronous sends),
//     Wait at Barrier, Wait at N x N and Late Broadcast, rank by rank.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "unit/virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

struct Bytes {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  std::uint8_t next() { return i < n ? p[i++] : 0; }
  bool done() const { return i >= n; }
};

constexpr double kEps = 1e-6;
constexpr Metric kChecked[] = {Metric::mpi_latesender, Metric::mpi_latesender_wo, Metric::mpi_latereceiver,
                               Metric::mpi_barrier_wait, Metric::mpi_wait_nxn, Metric::mpi_latebroadcast,
                               Metric::critical_path};
bool collective_metric(Metric m) {
  return m == Metric::mpi_barrier_wait || m == Metric::mpi_wait_nxn || m == Metric::mpi_latebroadcast;
}

// What the simulator says each rank waits, by wait state.
struct Expected {
  std::vector<double> late_sender, late_receiver, barrier, nxn, late_bcast;
  bool probes = false;  // (probe waits: compared across cuts only)
  bool ties = false;    // two calls that meet were entered at the same ns
};

// Builds the program; with `cuts`, the synchronizing and requested cuts too.
std::vector<VRank> build(Bytes b, bool cuts, Expected& x, std::uint64_t& seed) {
  const int n = 2 + b.next() % 4;
  seed = 1 + b.next();
  // The requested cuts' bytes come first: the program takes the rest, to
  // the end of the input (read after it, they were always 0: no cuts).
  std::vector<std::uint8_t> cut_bytes(3 * (b.next() % 8));
  for (auto& c : cut_bytes) c = b.next();
  auto r = make_ranks(n);
  x = Expected{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n), std::vector<double>(n),
               std::vector<double>(n)};
  std::vector<std::uint16_t> sub(n, 0);
  std::vector<int> members;
  for (int k = 0; k + 1 < n; ++k) members.push_back(k);
  for (int k : members) sub[k] = r[k].add_comm(2, members);
  // A rank resumes 1-997 ns (pseudo-random) after each of its calls, so two
  // ranks seldom enter a call at the same instant.  Where they do (to the
  // ns), the critical path has two right answers, and one epoch and the
  // cuts may pick either: the critical path is then not compared.
  std::vector<double> t(n, 0.001);
  std::uint64_t jitter = seed;
  auto resume = [&](int k, double at) {
    jitter = jitter * 6364136223846793005ull + 1442695040888963407ull;
    t[k] = at + static_cast<double>(1 + (jitter >> 33) % 997) * 1e-9;
  };
  auto tie = [&](double a, double b) { x.ties = x.ties || ns(a) == ns(b); };
  for (int k = 0; k < n; ++k) resume(k, 0.001);
  std::vector<std::uint32_t> req(n, 1);
  // Collectives a synchronizing cut follows: each rank's enter, and the
  // last leave.  A requested cut inside one lies no later than each rank's
  // enter (CutProtocol::catch_up applies it there).
  struct SyncSpan {
    std::vector<double> enter;
    double end = 0;
  };
  std::vector<SyncSpan> sync_spans;
  int tag = 0;
  auto world_coll = [&](std::uint32_t region, int root, std::vector<double>& wait, bool bcast) {
    const double last = *std::max_element(t.begin(), t.end()), t_root = t[root];
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < k; ++j) tie(t[j], t[k]);
    }
    for (int k = 0; k < n; ++k) {
      const double end = bcast ? std::max(t[k], t_root) + kEps : last + kEps;
      wait[k] += bcast ? std::max(0.0, t_root - t[k]) : last - t[k];
      r[k].coll(t[k], end, region, bcast ? root : -1);
      resume(k, end);
    }
  };
  for (int ops = 0; !b.done() && ops < 300; ++ops) {
    const int op = b.next() % 8, s = b.next() % n, d = (s + 1 + b.next() % (n - 1)) % n;
    const std::uint8_t arg = b.next();
    // (ops 2 and 4: the receive's return delayed, arg's bits 3-7)
    const double late = (arg & 0x80) != 0 ? (1 + ((arg >> 3) & 7)) * 0.4e-3 : 0.0;
    ++tag;
    if (op == 0 || op == 1) {  // compute
      const double w = (1 + (arg & 0xff)) * 0.5e-3;
      r[s].region(t[s], t[s] + w, kWork);
      t[s] += w;
    } else if (op == 2) {  // blocking send and receive, standard or synchronous
      const bool sync = arg & 1;
      const double ts = t[s], td = t[d], meet = std::max(ts, td) + kEps;
      tie(ts, td);
      r[s].send(ts, sync ? meet : ts + kEps, d, tag, 8, sync ? rt::kRegion_MPI_Ssend : rt::kRegion_MPI_Send,
                sync ? evflag::kSynchronous : 0);
      r[d].recv(td, meet + late, s, tag);
      x.late_sender[d] += std::max(0.0, ts - td);
      if (sync) x.late_receiver[s] += std::max(0.0, td - ts);
      resume(s, sync ? meet : ts + kEps);
      resume(d, meet + late);
    } else if (op == 3) {  // probe, then receive (after some work if the send is synchronous)
      const bool sync = arg & 1;
      const double ts = t[s], td = t[d], meet = std::max(ts, td) + kEps;
      const double post = meet + (sync ? ((arg >> 1) % 8) * 0.5e-3 : 0.0);
      tie(ts, td);
      // A synchronous send returns after its receive: the receiver's reply
      // may lie in an earlier window than the send's completion.
      const double send_end = sync ? post + 2 * kEps : ts + kEps;
      r[s].send(ts, send_end, d, tag, 8, sync ? rt::kRegion_MPI_Ssend : rt::kRegion_MPI_Send,
                sync ? evflag::kSynchronous : 0);
      r[d].probe(td, meet, s, tag);
      if (post > meet) r[d].region(meet, post, kWork);
      r[d].recv(post, post + kEps, s, tag);
      if (sync) x.late_receiver[s] += post - ts;  // (also after the probe's own wait)
      x.probes = true;
      resume(s, send_end);
      resume(d, post + kEps);
    } else if (op == 4) {  // isend + wait; irecv, work, wait
      const double ts = t[s], td = t[d], w = td + kEps + (arg % 8) * 0.5e-3;
      tie(ts, w);
      const std::uint32_t rs = req[s]++, rd = req[d]++;
      r[s].isend(ts, ts + kEps, d, tag, 8, rs);
      r[s].complete(ts + kEps, ts + 2 * kEps, rt::kRegion_MPI_Wait, {{rs, false}});
      r[d].irecv(td, td + kEps, s, tag, rd);
      if (w > td + kEps) r[d].region(td + kEps, w, kWork);
      const double end = std::max(w, ts) + kEps + late;
      r[d].complete(w, end, rt::kRegion_MPI_Wait, {{rd, true, s, tag}});
      x.late_sender[d] += std::max(0.0, ts - w);
      resume(s, ts + 2 * kEps);
      resume(d, end);
    } else if (op == 5) {
      const std::vector<double> enter = t;
      world_coll(rt::kRegion_MPI_Barrier, 0, x.barrier, false);
      if (cuts && (arg & 1)) {
        for (auto& v : r) v.cut();
        sync_spans.push_back({enter, *std::max_element(t.begin(), t.end())});
      }
    } else if (op == 6) {
      if (arg & 1) {
        world_coll(rt::kRegion_MPI_Allreduce, 0, x.nxn, false);
      } else {
        world_coll(rt::kRegion_MPI_Bcast, arg % n, x.late_bcast, true);
      }
    } else if (n >= 3) {  // Allreduce on ranks 0..n-2
      double last = 0;
      for (int k : members) {
        for (int j = 0; j < k; ++j) tie(t[j], t[k]);  // (members are 0..n-2)
        last = std::max(last, t[k]);
      }
      for (int k : members) {
        x.nxn[k] += last - t[k];
        r[k].coll(t[k], last + kEps, rt::kRegion_MPI_Allreduce, -1, 8, 8, sub[k]);
        resume(k, last + kEps);
      }
    }
  }
  // (MPI_Finalize applies the requested cuts no later than its enter: none
  // after the first rank's.)
  const double last_cut = *std::min_element(t.begin(), t.end());
  world_coll(rt::kRegion_MPI_Barrier, 0, x.barrier, false);  // as MPI_Finalize ends the run
  const double end = t[0];
  for (int k = 0; k < n; ++k) r[k].leave(end);
  if (cuts) {
    std::vector<double> at;
    for (std::size_t c = 0; c < cut_bytes.size(); c += 3) {
      const std::uint8_t where = cut_bytes[c], pos = cut_bytes[c + 1], fine = cut_bytes[c + 2];
      const std::vector<Event>& ev = r[(where >> 1) % n].events;
      // Half of them half a microsecond after one of a rank's events: in
      // the gaps of a microsecond between a call's events and its partner's
      // (a receive's return and its synchronous send's), which a cut at a
      // random time would almost never hit.
      const double tc = (where & 1) != 0
                            ? last_cut * (1 + pos + fine / 256.0) / 258.0
                            : static_cast<double>(ev[(pos * 256u + fine) * ev.size() / 65536].time) * 1e-9 + 0.5 * kEps;
      if (tc < last_cut) at.push_back(tc);
    }
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    for (double tc : at) {
      const SyncSpan* in = nullptr;
      for (const SyncSpan& sp : sync_spans) {
        if (tc >= *std::min_element(sp.enter.begin(), sp.enter.end()) && tc <= sp.end) in = &sp;
      }
      for (int k = 0; k < n; ++k) r[k].requested_cut_at(in != nullptr ? std::min(tc, in->enter[k]) : tc);
    }
  }
  return r;
}

// Equal within 1 ns; else says what differs, and the caller traps.
bool same(double a, double b, const char* what, int rank, Metric m) {
  if (std::fabs(a - b) <= 1e-9 + 1e-9 * std::max(std::fabs(a), std::fabs(b))) return true;
  std::fprintf(stderr, "fuzz_replay: %s differ at rank %d, %s: %.9f vs %.9f\n", what, rank,
               analysis::metric_info(m).name, a, b);
  return false;
}

// ONLINEWS_FUZZ_DUMP=1: prints the program (to see why an input fails).
void dump(const std::vector<VRank>& ranks, const std::vector<RankResult>& one,
          const std::vector<RankResult>& many) {
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    std::fprintf(stderr, "rank %zu: critical path %.9f (one epoch) %.9f (cuts)\n", k,
                 one[k].get(Metric::critical_path), many[k].get(Metric::critical_path));
    for (std::uint32_t reg = 0; reg < ranks[k].defs.regions.size(); ++reg) {
      const double a = one[k].get(Metric::critical_path, reg), b = many[k].get(Metric::critical_path, reg);
      if (a != b) std::fprintf(stderr, "     %s: %.9f vs %.9f\n", ranks[k].defs.regions[reg].name.c_str(), a, b);
    }
    const auto& v = ranks[k];
    std::size_t c = 0;
    for (std::size_t i = 0; i < v.events.size(); ++i) {
      for (; c < v.cuts.size() && v.cuts[c] == i; ++c) std::fprintf(stderr, "   -- cut at %.9f\n", v.cut_times[c]);
      const Event& e = v.events[i];
      std::fprintf(stderr, "   %.9f %-14s", static_cast<double>(e.time) * 1e-9, event_kind_name(e.kind));
      if (e.kind == EventKind::Enter) {
        std::fprintf(stderr, " %s", v.defs.regions[e.region()].name.c_str());
      } else if (e.kind != EventKind::Leave) {
        std::fprintf(stderr, " peer %d tag %d", e.peer, e.tag);
      }
      std::fprintf(stderr, "\n");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  Expected x;
  std::uint64_t seed = 0;
  auto plain = build(Bytes{data, size}, false, x, seed);
  auto with_cuts = build(Bytes{data, size}, true, x, seed);
  std::vector<RankResult> one, many;
  try {
    one = replay(plain);
    many = replay(with_cuts, {"all"}, {seed, true});
  } catch (const std::exception&) {
    require(false);  // a deadlock of the replay, or an error inside it
  }
  if (std::getenv("ONLINEWS_FUZZ_DUMP") != nullptr) dump(with_cuts, one, many);
  bool split = false;
  bool lost_lr = false;  // a Late Receiver lost: a synchronous send returned before its receive's window
  double approximate = 0;  // (the critical path's counted approximations, docs/design.md)
  for (const auto& rr : many) {
    for (const auto& f : rr.facts) {
      split = split || f.split_collectives > 0;
      lost_lr = lost_lr || f.crossing_sync_sends > 0;
      approximate += f.approximate_path_seconds;
    }
  }
  const int n = static_cast<int>(one.size());
  // The path's segments tile each window: a split instance or a lost Late
  // Receiver moves time between ranks, never adds or drops any.  (A counted
  // approximation may: a receive two windows after its send leaves the
  // receiver's part before its window to no one, and the sender's window
  // may have begun earlier, at a cut it applied at a collective's enter.)
  if (!x.ties && approximate == 0) {
    double a = 0, b = 0;
    for (int k = 0; k < n; ++k) {
      a += one[k].get(Metric::critical_path);
      b += many[k].get(Metric::critical_path);
    }
    require(std::fabs(a - b) <= 1e-6 || same(a, b, "one epoch and cuts (sum over ranks)", -1, Metric::critical_path));
  }
  for (int k = 0; k < n; ++k) {
    for (Metric m : kChecked) {
      // (A split collective instance is left out: its waits, and the path
      // through them.)
      if ((split && (collective_metric(m) || m == Metric::critical_path)) ||
          (x.ties && m == Metric::critical_path)) {
        continue;
      }
      // (A lost Late Receiver, counted in crossing_sync_sends, lowers the
      // metric and leaves the path on the sender through that wait.)
      if (lost_lr && m == Metric::mpi_latereceiver) {
        require(many[k].get(m) <= one[k].get(m) + 1e-9 ||
                same(one[k].get(m), many[k].get(m), "one epoch and cuts", k, m));
        continue;
      }
      if (lost_lr && m == Metric::critical_path) continue;
      // (What the analysis counted as approximate: a message whose receive
      // completed two windows or more after its send, a synchronous send
      // that waited across a cut for a receive posted before it.)
      if (m == Metric::critical_path && approximate > 0) continue;
      require(same(one[k].get(m), many[k].get(m), "one epoch and cuts", k, m));
    }
    const char* built = "analysis and simulator";
    if (!x.probes) require(same(one[k].get(Metric::mpi_latesender), x.late_sender[k], built, k, Metric::mpi_latesender));
    require(same(one[k].get(Metric::mpi_latereceiver), x.late_receiver[k], built, k, Metric::mpi_latereceiver));
    require(same(one[k].get(Metric::mpi_barrier_wait), x.barrier[k], built, k, Metric::mpi_barrier_wait));
    require(same(one[k].get(Metric::mpi_wait_nxn), x.nxn[k], built, k, Metric::mpi_wait_nxn));
    require(same(one[k].get(Metric::mpi_latebroadcast), x.late_bcast[k], built, k, Metric::mpi_latebroadcast));
  }
  return 0;
}
