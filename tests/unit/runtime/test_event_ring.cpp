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

TEST_CASE("a drained ring rewinds to its first slot, and only when empty", "[buffer]") {
  EventRing r(8);
  for (std::uint64_t i = 1; i <= 6; ++i) CHECK(r.push(Event::enter(i, 1)));
  r.rewind_if_empty();  // six events wait: nothing moves
  CHECK(r.write_index() == 6);
  CHECK(take(r) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6});
  r.rewind_if_empty();
  CHECK(r.write_index() == 0);
  CHECK(r.read_available() == 0);
  CHECK(r.write_available(0) == 8);  // the producer's cached view moved with it
  // Eight fit without wrapping (slots 0-7, not 6, 7, 8, 0, ...), in order,
  // and the ring is full again at eight, not before.
  for (std::uint64_t i = 7; i <= 14; ++i) CHECK(r.push(Event::enter(i, 1)));
  CHECK_FALSE(r.push(Event::enter(15, 1)));
  CHECK(r.write_index() == 8);
  CHECK(take(r) == std::vector<std::uint64_t>{7, 8, 9, 10, 11, 12, 13, 14});
  r.rewind_if_empty();
  CHECK(r.write_index() == 0);
  r.rewind_if_empty();  // (already at the start)
  CHECK(r.write_index() == 0);
  CHECK(take(r).empty());
}

TEST_CASE("a rewound ring forgets the producer's cached view of the consumer", "[buffer]") {
  EventRing r(8);  // 9 slots
  for (std::uint64_t i = 1; i <= 6; ++i) CHECK(r.push(Event::enter(i, 1)));
  CHECK(take(r).size() == 6);  // consumer at slot 6
  // Across the array's end until full: the producer looks up the consumer's
  // position (6) and keeps it.
  std::uint64_t pushed = 0;
  while (r.push(Event::enter(100 + pushed, 1))) ++pushed;
  CHECK(pushed == 8);
  CHECK(take(r).size() == 8);
  r.rewind_if_empty();
  CHECK(r.write_index() == 0);
  // A kept position of 6 would show 5 free slots here without looking again.
  CHECK(r.write_available(0) == 8);
}
