// Sampling's placement of samples into a thread's event stream
// (runtime/sample_placer.hpp): each instant of computation goes to the
// nearest sample within `half`, samples outside computation are left out,
// and a window's end places what lies before it.
#include <catch2/catch.hpp>

#include "runtime/regions.hpp"
#include "runtime/sample_placer.hpp"

using namespace onlinews;
using namespace onlinews::rt;

namespace {

constexpr std::uint32_t kRoot = 1, kMpi = 3, kA = 10, kB = 11;
constexpr std::uint64_t kPcA = 0xa0, kPcB = 0xb0, kPcFiltered = 0xf0;

struct Names final : SampleNames {
  bool computes(std::uint32_t region) override { return region != kMpi; }
  std::uint32_t region_of(std::uint64_t pc) override {
    return pc == kPcA ? kA : pc == kPcB ? kB : kFilteredRegion;
  }
};

// "E<region>@t" / "L@t" for each event, in order.
std::string show(const std::vector<Event>& ev) {
  std::string s;
  for (const Event& e : ev) {
    s += e.kind == EventKind::Enter ? "E" + std::to_string(e.region()) : "L";
    s += "@" + std::to_string(e.time) + " ";
  }
  return s;
}

}  // namespace

TEST_CASE("samples split computation at midpoints and stop short of MPI", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot), Event::enter(100, kMpi), Event::leave(110)};
  // A at 10 and 20, B at 30: A until halfway to B (25), B until 15 after its
  // sample (45); the sample at 105 lies in the MPI call.
  placer.place(ev, 0, {{10, kPcA}, {20, kPcA}, {30, kPcB}, {105, kPcA}}, names);
  CHECK(show(ev) == "E1@0 E10@0 L@25 E11@25 L@45 E3@100 L@110 ");
  CHECK(placer.placed() == 3);
  CHECK(placer.outside() == 1);
  CHECK(placer.held() == 0);
}

TEST_CASE("a sample waits for the event after it", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot)};
  placer.place(ev, 0, {{10, kPcA}}, names);
  CHECK(show(ev) == "E1@0 ");
  CHECK(placer.held() == 1);
  ev.push_back(Event::enter(20, kMpi));
  placer.place(ev, 1, {}, names);
  // Up to the event, which is closer than `half`.
  CHECK(show(ev) == "E1@0 E10@0 L@20 E3@20 ");
}

TEST_CASE("samples far apart make separate visits; the gap stays with the enclosing region", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot), Event::enter(200, kMpi)};
  placer.place(ev, 0, {{40, kPcA}, {100, kPcA}}, names);
  CHECK(show(ev) == "E1@0 E10@25 L@55 E10@85 L@115 E3@200 ");
}

TEST_CASE("a filtered function's time stays with the enclosing region", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot), Event::enter(100, kMpi)};
  placer.place(ev, 0, {{10, kPcA}, {20, kPcFiltered}, {30, kPcB}}, names);
  CHECK(show(ev) == "E1@0 E10@0 L@15 E11@25 L@45 E3@100 ");
  CHECK(placer.placed() == 3);
}

TEST_CASE("a window's end places the samples before it; later ones before it are late", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot)};
  placer.place(ev, 0, {{10, kPcA}, {20, kPcA}}, names);
  placer.flush(ev, 18, 18, names);
  CHECK(show(ev) == "E1@0 E10@0 L@18 ");
  CHECK(placer.held() == 1);
  // The next window: the sample at 20 from the boundary on; one at 16 comes
  // too late for the window it belonged to.
  ev.clear();
  ev.push_back(Event::enter(40, kMpi));
  placer.place(ev, 0, {{16, kPcB}}, names);
  CHECK(show(ev) == "E10@18 L@35 E3@40 ");
  CHECK(placer.late() == 1);
}

TEST_CASE("placed streams keep time order and balance", "[sampling]") {
  Names names;
  SamplePlacer placer(7);
  std::vector<Event> ev;
  std::vector<Sample> samples;
  // Computation and MPI calls alternate; samples every 3 ns throughout.
  for (std::uint64_t t = 0; t < 1000; t += 50) {
    ev.push_back(Event::enter(t, kRoot));
    ev.push_back(Event::enter(t + 30, kMpi));
    ev.push_back(Event::leave(t + 40));
    ev.push_back(Event::leave(t + 45));
  }
  for (std::uint64_t t = 1; t < 1000; t += 3) samples.push_back({t, (t / 10) % 2 == 0 ? kPcA : kPcB});
  placer.place(ev, 0, samples, names);
  int depth = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    depth += ev[i].kind == EventKind::Enter ? 1 : -1;
    REQUIRE(depth >= 0);
    if (i > 0) REQUIRE(ev[i].time >= ev[i - 1].time);
  }
  CHECK(depth == 0);
  CHECK(placer.placed() + placer.outside() == samples.size() - placer.held());
}

TEST_CASE("after a window's end the next visit begins at it, even without a sample close before", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot), Event::enter(50, kMpi), Event::leave(60)};
  placer.place(ev, 0, {}, names);
  placer.flush(ev, 100, 100, names);
  ev.clear();
  ev.push_back(Event::enter(140, kMpi));
  // The sample at 105 would reach back to 90, before the boundary at 100.
  placer.place(ev, 0, {{105, kPcA}}, names);
  CHECK(show(ev) == "E10@100 L@120 E3@140 ");
}

TEST_CASE("a window's end inside a part of a call not recorded yet places nothing after its start", "[sampling]") {
  Names names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot)};
  // Computation until 40, where the tool's slice began (its region is
  // recorded after it: Enter at 40); the window ends at 50, inside it.
  placer.place(ev, 0, {{10, kPcA}, {30, kPcA}, {45, kPcB}}, names);
  placer.flush(ev, 50, 40, names);
  CHECK(show(ev) == "E1@0 E10@0 L@40 ");
  CHECK(placer.late() == 1);
  CHECK(placer.held() == 0);
}

TEST_CASE("samples in onlinews' own code are not computation", "[sampling]") {
  struct ToolNames final : SampleNames {
    bool computes(std::uint32_t region) override { return region != kMpi; }
    std::uint32_t region_of(std::uint64_t pc) override { return pc == kPcA ? kA : kB; }
    bool in_tool(std::uint64_t pc) override { return pc == kPcB; }
  } names;
  SamplePlacer placer(15);
  std::vector<Event> ev = {Event::enter(0, kRoot), Event::enter(100, kMpi)};
  placer.place(ev, 0, {{10, kPcA}, {20, kPcB}}, names);
  CHECK(show(ev) == "E1@0 E10@0 L@25 E3@100 ");
  CHECK(placer.outside() == 1);
}
