// Late Receiver (backward replay): synchronizing sends wait for the receive.
#include <catch2/catch.hpp>

#include "../../virtual_ranks.hpp"

using namespace onlinews;
using namespace onlinews::test;

TEST_CASE("synchronous send waits for a late receive", "[late_receiver]") {
  // r0: MPI_Ssend from 1 to 4; r1 posts its receive at 4.
  auto r = make_ranks(2);
  r[0].send(1.0, 4.1, 1, 0, 8, rt::kRegion_MPI_Ssend, evflag::kSynchronous);
  r[1].region(0.5, 4.0, kWork);
  r[1].recv(4.0, 4.2, 0);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latereceiver, rt::kRegion_MPI_Ssend) == Approx(3.0));
  CHECK(res[0].get(Metric::mpi_clr_count) == 1.0);
  CHECK(res[1].get(Metric::mpi_latesender) == 0.0);
}

TEST_CASE("standard sends synchronize only above the eager limit", "[late_receiver]") {
  auto r = make_ranks(2);
  // 1 MiB: rendezvous (default eager limit 4096 on one host) -> Late Receiver.
  r[0].send(1.0, 3.05, 1, 1, 1 << 20);
  // 64 bytes: eager; the send returned at 3.2, before the receive: no wait.
  r[0].send(3.1, 3.2, 1, 2, 64);  // (receive posted at 4.0)
  r[1].recv(3.0, 3.1, 0, 1);
  r[1].recv(4.0, 4.1, 0, 2);
  for (auto& v : r) v.leave(5.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latereceiver) == Approx(2.0));
  CHECK(res[0].get(Metric::mpi_clr_count) == 1.0);
}

TEST_CASE("Wait completing an Issend is a Late Receiver", "[late_receiver]") {
  auto r = make_ranks(2);
  r[0].isend(0.5, 0.6, 1, 3, 100, 51, evflag::kSynchronous);
  r[0].complete(1.0, 3.1, rt::kRegion_MPI_Wait, {{51, false}});
  r[1].recv(3.0, 3.2, 0, 3);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latereceiver, rt::kRegion_MPI_Wait) == Approx(2.0));
}

TEST_CASE("a Waitall that already waited as Late Sender is not a Late Receiver", "[late_receiver]") {
  // r0 waits in Waitall for its receive from r1 (sent at 3) and its Issend
  // to r1 (received at 2.5): the call is a Late Sender candidate, so no LR.
  auto r = make_ranks(2);
  r[0].irecv(0.1, 0.2, 1, 0, 61);
  r[0].isend(0.3, 0.4, 1, 1, 100, 62, evflag::kSynchronous);
  r[0].complete(1.0, 3.2, rt::kRegion_MPI_Waitall, {{61, true, 1, 0}, {62, false}});
  r[1].recv(2.5, 2.6, 0, 1);
  r[1].send(3.0, 3.1, 0, 0);
  for (auto& v : r) v.leave(4.0);
  auto res = replay(r);
  CHECK(res[0].get(Metric::mpi_latesender) == Approx(2.0));
  CHECK(res[0].get(Metric::mpi_latereceiver) == 0.0);
}
