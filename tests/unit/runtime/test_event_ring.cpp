// The ring under each thread's event buffer: order across the array's end,
// full and empty, and the producer's cached view of the consumer.
#include <catch2/catch.hpp>

#include "runtime/event_ring.hpp"

using namespace onlinews;
using namespace onlinews::rt;

namespace {
std::vector<std::uint64_t> take(EventRing& r) {
  std::vector<std::uint64_t> t;
  r.consume_all([&](const Event& e) { t.push_back(e.time); });
  return t;
}
}  // namespace

TEST_CASE("the event ring keeps order across its end and refuses when full", "[buffer]") {
  EventRing r(4);
  CHECK(r.write_available(0) == 4);
  for (std::uint64_t i = 1; i <= 4; ++i) CHECK(r.push(Event::enter(i, 1)));
  CHECK_FALSE(r.push(Event::enter(5, 1)));  // full
  CHECK(r.write_available(0) == 0);
  CHECK(r.read_available() == 4);
  CHECK(take(r) == std::vector<std::uint64_t>{1, 2, 3, 4});
  // Refill across the end of the array: 5..8 occupy slots 4, 0, 1, 2.
  for (std::uint64_t i = 5; i <= 8; ++i) CHECK(r.push(Event::enter(i, 1)));
  CHECK_FALSE(r.push(Event::enter(9, 1)));
  CHECK(take(r) == std::vector<std::uint64_t>{5, 6, 7, 8});
  CHECK(r.read_available() == 0);
  CHECK(take(r).empty());
  CHECK(r.write_available(4) == 4);
}
