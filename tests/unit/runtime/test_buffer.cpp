// The per-thread event buffer and its overflow policy.
#include <catch2/catch.hpp>

#include <thread>

#include "runtime/buffer.hpp"

using namespace onlinews;
using namespace onlinews::rt;

TEST_CASE("events come out in order", "[buffer]") {
  ThreadBuffer b(1024, 0);
  for (int i = 0; i < 100; ++i) b.push(Event::enter(static_cast<std::uint64_t>(i), 7));
  std::vector<Event> out;
  CHECK(b.drain(out) == 100);
  CHECK(out[42].time == 42u);
  CHECK(b.take_dropped() == 0);
}

TEST_CASE("a full buffer drops events but keeps regions balanced", "[buffer]") {
  const std::size_t cap = kLeaveReserve + 100;
  ThreadBuffer b(cap, 0);
  // 100 nested Enters fit; then Enters are refused (the reserve is for Leaves).
  int recorded_enters = 0;
  for (int i = 0; i < 200; ++i) b.push(Event::enter(1, 1));
  std::vector<Event> out;
  // 200 Leaves: the 100 accepted Enters get theirs, the 100 dropped ones drop theirs.
  for (int i = 0; i < 200; ++i) b.push(Event::leave(2));
  b.drain(out);
  int depth = 0, min_depth = 0;
  for (const auto& e : out) {
    if (e.kind == EventKind::Enter) ++recorded_enters, ++depth;
    if (e.kind == EventKind::Leave) --depth;
    min_depth = std::min(min_depth, depth);
  }
  CHECK(recorded_enters == 100);
  CHECK(depth == 0);
  CHECK(min_depth == 0);
  CHECK(b.take_dropped() == 200);
  CHECK(b.fill() == 0.0);
}

TEST_CASE("a producer thread and a draining consumer", "[buffer]") {
  ThreadBuffer b(1 << 12, 0);
  constexpr int kEvents = 200000;
  std::thread producer([&] {
    for (int i = 0; i < kEvents; ++i) {
      b.push(Event::enter(static_cast<std::uint64_t>(i), 1));
      b.push(Event::leave(static_cast<std::uint64_t>(i)));
    }
  });
  std::vector<Event> out;
  std::uint64_t dropped = 0;
  while (out.size() + dropped < 2u * kEvents) {
    b.drain(out);
    dropped += b.take_dropped();
    std::this_thread::yield();
  }
  producer.join();
  b.drain(out);
  CHECK(out.size() + dropped == 2u * kEvents);
  // Whatever was kept is in order and balanced.
  std::uint64_t last = 0;
  int depth = 0;
  for (const auto& e : out) {
    CHECK(e.time >= last);
    last = e.time;
    depth += e.kind == EventKind::Enter ? 1 : -1;
    REQUIRE(depth >= 0);
  }
}

TEST_CASE("unsuccessful polls are folded into one visit", "[buffer]") {
  ThreadBuffer b(1024, 0);
  // Enter of the first poll, its Leave deferred and then moved by 999 more.
  b.push(Event::enter(10, 5));
  b.defer_leave(11, 5);
  for (std::uint64_t t = 12; t < 1011; ++t) {
    REQUIRE(b.polling(5));
    b.extend_poll(t);
  }
  CHECK_FALSE(b.polling(6));
  b.push(Event::enter(2000, 7));  // anything else records the pending Leave first
  CHECK_FALSE(b.polling(5));
  std::vector<Event> out;
  REQUIRE(b.drain(out) == 3);
  CHECK(out[1].kind == EventKind::Leave);
  CHECK(out[1].time == 1010u);
  CHECK(out[2].time == 2000u);
  CHECK(b.coalesced_polls() == 999);
}

// drain() moves what the window holds into fresh storage when it grows
// (populated first): the events before and the ones appended keep their
// order and values, the appended ones mapped.
TEST_CASE("a window that grows over many drains keeps its events", "[buffer]") {
  ThreadBuffer b(1 << 12, 0);
  std::vector<Event> out;
  std::uint64_t next = 0;
  std::size_t grew = 0;
  for (int round = 0; round < 64; ++round) {
    for (int i = 0; i < 1000; ++i) b.push(Event::enter(next++, 3));
    const std::size_t capacity = out.capacity();
    CHECK(b.drain(out, [](std::uint64_t t) { return 2 * t + 1; }) == 1000);
    grew += out.capacity() != capacity ? 1 : 0;
  }
  REQUIRE(out.size() == 64000u);
  CHECK(grew >= 5);  // (64 000 events of 32 bytes: storage replaced several times)
  for (std::size_t i = 0; i < out.size(); ++i) {
    REQUIRE(out[i].time == 2 * i + 1);
    REQUIRE(out[i].kind == EventKind::Enter);
  }
}
