// Communicators used for collectives by threads whose collectives are not
// analyzed ("mixed", runtime/comms.hpp; point-to-point calls are analyzed on
// every thread): one member's flag is enough for every member to leave the
// instances out, and it stays set.
#include <catch2/catch.hpp>

#include "../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

namespace {

// Two epochs of: r0 works 1 s and sends to r1, which waits 0.8 s in its
// receive; then a barrier in which r0 waits 0.1 s.
std::vector<VRank> program() {
  auto r = make_ranks(2);
  double t = 0.0;
  for (int it = 0; it < 2; ++it) {
    r[0].region(t, t + 1.0, kWork);
    r[0].send(t + 1.0, t + 1.1, 1, it);
    r[1].recv(t + 0.2, t + 1.2, 0, it);
    r[0].coll(t + 1.1, t + 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    r[1].coll(t + 1.2, t + 1.3, rt::kRegion_MPI_Barrier, -1, 0, 0);
    for (auto& v : r) v.cut();
    t += 1.5;
  }
  for (auto& v : r) v.leave(t);
  return r;
}

}  // namespace

TEST_CASE("collectives of a communicator mixed for collectives are skipped on every member", "[mixed]") {
  auto ranks = program();
  ranks[0].defs.comms[0].mixed_collective = true;
  auto res = replay(ranks);
  CHECK(res[0].get(Metric::mpi_barrier_wait) == 0.0);
  CHECK(res[1].get(Metric::mpi_latesender) == Approx(2 * 0.8));  // messages still matched
}
