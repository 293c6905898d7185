// The event kinds generated from runtime/event.def.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

#include "event.hpp"

using namespace onlinews;

TEST_CASE("event.def yields one distinct name per kind, in enum order", "[event]") {
  std::set<std::string> names;
  for (int k = 0; k < kEventKindCount; ++k) {
    const char* n = event_kind_name(static_cast<EventKind>(k));
    REQUIRE(std::strcmp(n, "?") != 0);
    names.insert(n);
  }
  CHECK(names.size() == static_cast<std::size_t>(kEventKindCount));
  CHECK(std::string(event_kind_name(EventKind::Enter)) == "Enter");
  CHECK(std::string(event_kind_name(EventKind::Match)) == "Match");
  CHECK(std::string(event_kind_name(EventKind::kCount)) == "?");
}

TEST_CASE("event.def: completion kinds and payloads", "[event]") {
  // Events recorded after the MPI function returned stay with the call's Leave.
  for (EventKind k : {EventKind::Recv, EventKind::RecvComplete, EventKind::SendComplete, EventKind::Probe,
                      EventKind::Match, EventKind::CollectiveEnd})
    CHECK(completes_call(k));
  for (EventKind k : {EventKind::Enter, EventKind::Leave, EventKind::Send, EventKind::SendRequest,
                      EventKind::RecvRequest})
    CHECK_FALSE(completes_call(k));
  CHECK(payload_of(EventKind::Enter) == EventPayload::Region);
  CHECK(payload_of(EventKind::Leave) == EventPayload::None);
  CHECK(payload_of(EventKind::SendComplete) == EventPayload::Request);
  CHECK(payload_of(EventKind::CollectiveEnd) == EventPayload::Collective);

  // The typed accessors read the fields the recording filled.
  const Event c = Event::collective_end(5, 2, 3, 100, (std::uint64_t{1} << 40) + 7);
  CHECK(c.root() == 3);
  CHECK(c.bytes_out() == 100);
  CHECK(c.bytes_in() == (std::uint64_t{1} << 40) + 7);
  const Event p = Event::message(EventKind::Probe, 5, 1, 0, 9, 0, 42);
  CHECK(p.handle() == 42);
  CHECK(Event::enter(1, 17).region() == 17);
}

TEST_CASE("an MPI call's Enter carries its call site, an OpenMP Enter its team", "[event]") {
  int code = 0;
  const Event call = Event::call_enter(5, 7, &code);
  CHECK(call.region() == 7);
  CHECK(call.site() == reinterpret_cast<std::uintptr_t>(&code));
  CHECK(call.team() == 0);  // (not an OpenMP team: the omp patterns must not see one)
  const Event none = Event::call_enter(5, 7, nullptr);
  CHECK(none.site() == 0);
  CHECK(none.flags == 0);
  const Event task = Event::enter(5, 9, 4, 123, evflag::kNestedTeam);
  CHECK(task.team() == 123);
  CHECK(task.site() == 0);
}
