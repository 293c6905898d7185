// The ring under each thread's event buffer: order across the array's end,
// full and empty, and the producer's cached view of the consumer.
#include <sys/mman.h>

#include <catch2/catch.hpp>

#include "runtime/event_ring.hpp"

using namespace onlinews;
using namespace onlinews::rt;

namespace {
// Whether every page of [from, to) bytes of the ring's array is resident.
bool resident(const EventRing& r, std::size_t from, std::size_t to) {
  const std::size_t page = analysis::page_bytes();
  std::vector<unsigned char> v((to - from + page - 1) / page);
  REQUIRE(::mincore(const_cast<char*>(static_cast<const char*>(r.data())) + from, to - from, v.data()) == 0);
  for (unsigned char c : v) {
    if ((c & 1) == 0) return false;
  }
  return true;
}

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

TEST_CASE("the ring's pages are made resident ahead of the producer, in batches", "[buffer]") {
  const std::size_t page = analysis::page_bytes();
  const std::size_t ahead = 4 * page / sizeof(Event);  // four pages
  EventRing r(1 << 20, ahead);                         // 32 MiB
  CHECK(reinterpret_cast<std::uintptr_t>(r.data()) % page == 0);
  // Aligned to a huge page too (all of it can be in huge pages), where the
  // kernel has them and the ring holds at least 8: ONLINEWS_HUGE_PAGES'
  // default.  (Then the probe at 16 MiB below lies beyond the first.)
  if (const std::size_t h = analysis::huge_page_bytes(); h != 0 && h <= (4u << 20)) {
    CHECK(reinterpret_cast<std::uintptr_t>(r.data()) % h == 0);
  }
  if (!analysis::populate_supported().load()) {
    WARN("this kernel has no MADV_POPULATE_WRITE (Linux < 5.14): pages fault in when written");
    return;
  }
  CHECK(r.populated_bytes() == 4 * page);
  CHECK(resident(r, 0, 4 * page));
  CHECK_FALSE(resident(r, 16 << 20, (16 << 20) + page));  // far ahead: untouched
  // Half a page written: the front lies less than a quarter of `ahead` (a
  // page) short of four pages beyond the producer -- nothing to do yet.
  const std::size_t half = page / 2 / sizeof(Event);
  for (std::size_t i = 0; i < half; ++i) REQUIRE(r.push(Event::enter(i, 1)));
  r.populate_ahead(ahead);
  CHECK(r.populated_bytes() == 4 * page);
  // Two pages written: the front moves to four pages beyond the producer.
  for (std::size_t i = 0; i < 3 * half; ++i) REQUIRE(r.push(Event::enter(i, 1)));
  r.populate_ahead(ahead);
  CHECK(r.populated_bytes() == 6 * page);
  CHECK(resident(r, 0, 6 * page));
  CHECK(take(r).size() == 2 * page / sizeof(Event));  // (contents untouched by it)
}

TEST_CASE("a small ring is resident whole from the start", "[buffer]") {
  const std::size_t page = analysis::page_bytes();
  EventRing r(100, 1 << 20);
  if (!analysis::populate_supported().load()) return;
  // 101 slots of 32 bytes fill the array's pages partly: all of them count.
  CHECK(r.populated_bytes() == (101 * sizeof(Event) + page - 1) / page * page);
  CHECK(resident(r, 0, r.populated_bytes()));
  for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(r.push(Event::enter(i, 1)));
  r.populate_ahead(1 << 20);  // (nothing left to do)
  CHECK(take(r).size() == 100);
}
