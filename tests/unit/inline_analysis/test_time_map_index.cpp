// The backward replay's time maps over long spans take whole chunks from
// TimeMapIndex (time_map_index.hpp): every result must be the same as with
// every event scanned.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"
#include "inline_analysis/time_map_index.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// 3 ranks.  Each round: long stretches of local regions (thousands of
// events without a synchronization point, so that the critical path and the
// intervals span many chunks), then a ring of messages in which each rank
// waits for a late sender, and every third round a barrier.  Requested
// cuts fall inside the stretches (the intervals they split are carried).
std::vector<VRank> program() {
  auto r = make_ranks(3);
  double t = 0.001;
  for (int round = 0; round < 6; ++round) {
    for (int k = 0; k < 3; ++k) {
      double u = t;
      const int regions = 1500 + 700 * k + 300 * round;  // (ranks differ in length: waits)
      for (int j = 0; j < regions; ++j) {
        const double d = 1e-6 * (1 + (j * 7 + k * 3 + round) % 11);
        r[static_cast<std::size_t>(k)].region(u, u + d, j % 3 == 0 ? kSolve : kWork);
        u += d + 2e-7;
      }
      r[static_cast<std::size_t>(k)].send(u, u + 1e-6, (k + 1) % 3, round);
    }
    double end = 0;
    for (auto& v : r) end = std::max(end, static_cast<double>(v.events.back().time) * 1e-9);
    for (int k = 0; k < 3; ++k) {
      const double post = static_cast<double>(r[static_cast<std::size_t>(k)].events.back().time) * 1e-9 + 1e-6;
      r[static_cast<std::size_t>(k)].recv(post, end + 2e-6, (k + 2) % 3, round);
    }
    t = end + 1e-5;
    if (round % 3 == 2) {
      for (auto& v : r) v.coll(t, t + 1e-5, rt::kRegion_MPI_Barrier);
      t += 2e-5;
      if (round == 2) {
        for (auto& v : r) v.cut();
      }
    }
  }
  for (auto& v : r) v.leave(t);
  // Requested cuts inside the stretches of rounds 1 and 4.
  const double mid1 = static_cast<double>(r[0].events[r[0].events.size() / 6].time) * 1e-9;
  const double mid4 = static_cast<double>(r[0].events[4 * r[0].events.size() / 6].time) * 1e-9;
  for (auto& v : r) {
    v.requested_cut_at(mid1);
    v.requested_cut_at(mid4);
  }
  return r;
}

}  // namespace

TEST_CASE("time maps over long spans are the same with the chunk index", "[sync][time_map]") {
  auto a = program();
  REQUIRE(a[0].events.size() > 8 * analysis::TimeMapIndex::kChunk);
  const std::uint64_t taken = analysis::TimeMapIndex::chunks_taken.load();
  const auto indexed = replay(a);
  CHECK(analysis::TimeMapIndex::chunks_taken.load() > taken + 50);  // (114 when written)
  const std::size_t saved = analysis::TimeMapIndex::min_span;
  analysis::TimeMapIndex::min_span = SIZE_MAX;
  auto b = program();
  const std::uint64_t before_scan = analysis::TimeMapIndex::chunks_taken.load();
  const auto scanned = replay(b);
  analysis::TimeMapIndex::min_span = saved;
  // (The scan is one: a wrapped span test once let it take 40 chunks.)
  CHECK(analysis::TimeMapIndex::chunks_taken.load() == before_scan);
  double delay = 0, path = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& x = *indexed[k].analyzer;
    const auto& y = *scanned[k].analyzer;
    REQUIRE(x.callpaths().size() == y.callpaths().size());
    for (std::uint32_t cp = 0; cp < x.callpaths().size(); ++cp) {
      for (int m = 0; m < analysis::kMetricCount; ++m) {
        const double u = x.profile().run_value(0, cp, static_cast<Metric>(m));
        const double v = y.profile().run_value(0, cp, static_cast<Metric>(m));
        INFO("rank " << k << ", call path " << cp << ", metric " << analysis::metric_info(m).name);
        CHECK(u == Approx(v).epsilon(1e-12).margin(1e-15));
      }
    }
    delay += indexed[k].get(Metric::delay_latesender);
    path += indexed[k].get(Metric::critical_path);
  }
  // (The case is what it is meant to be: waits with causes, a long path.)
  CHECK(delay > 1e-3);
  CHECK(path > 0.01);
  CHECK(indexed[0].facts.size() == 4);
}
