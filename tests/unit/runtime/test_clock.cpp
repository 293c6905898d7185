// The timestamp counter's choice (ONLINEWS_CLOCK, the clocksource, the
// processor's flags) and ClockMapper's mapping of TSC readings to
// CLOCK_MONOTONIC, through jumps and changes of rate.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "runtime/clock.hpp"

using namespace onlinews::rt;

namespace {
const std::string kInvariant = " fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq";
const std::string kInterpolated = ", interpolated to CLOCK_MONOTONIC at each epoch";
}  // namespace

TEST_CASE("auto takes the TSC only where the kernel's clocksource is tsc", "[clock]") {
  ClockChoice c = choose_clock(nullptr, "tsc", "", true);
  CHECK(c.tsc);
  CHECK(c.description == "tsc" + kInterpolated);
  CHECK(c.warning.empty());
  // kvm-clock over an invariant TSC: mostly a TSC the kernel was told not
  // to trust (this project's VMs: clocksource=kvm-clock tsc=unstable).
  for (const char* setting : {"auto", "", static_cast<const char*>(nullptr)}) {
    c = choose_clock(setting, "kvm-clock", kInvariant, true);
    CHECK_FALSE(c.tsc);
    CHECK(c.description == "CLOCK_MONOTONIC (the kernel's clocksource is kvm-clock, not tsc)");
    CHECK(c.warning.empty());
  }
  c = choose_clock(nullptr, "hpet", kInvariant, true);
  CHECK_FALSE(c.tsc);
  CHECK(c.description == "CLOCK_MONOTONIC (the kernel's clocksource is hpet, not tsc)");
  c = choose_clock(nullptr, "", kInvariant, true);
  CHECK_FALSE(c.tsc);
  CHECK(c.description == "CLOCK_MONOTONIC (the kernel's clocksource is unknown, not tsc)");
}

TEST_CASE("ONLINEWS_CLOCK forces either counter; a bad value warns once and means auto", "[clock]") {
  ClockChoice c = choose_clock("monotonic", "tsc", kInvariant, true);
  CHECK_FALSE(c.tsc);
  CHECK(c.description == "CLOCK_MONOTONIC (ONLINEWS_CLOCK=monotonic)");
  CHECK(c.warning.empty());

  c = choose_clock("tsc", "kvm-clock", kInvariant, true);
  CHECK(c.tsc);
  CHECK(c.description == "tsc (ONLINEWS_CLOCK=tsc; the kernel's clocksource is kvm-clock)" + kInterpolated);
  CHECK(c.warning.empty());
  c = choose_clock("tsc", "tsc", "", true);
  CHECK(c.description == "tsc" + kInterpolated);
  CHECK(c.warning.empty());  // (the kernel trusts it)
  // Not invariant (a constant rate but stopping in deep sleep states, or
  // the other way round; flags that only start with the names): the TSC as
  // asked, with a warning.
  for (const std::string flags : {" fpu constant_tsc", " fpu nonstop_tsc", " constant_tsc_x nonstop_tsc_y", ""}) {
    c = choose_clock("tsc", "hpet", flags, true);
    CHECK(c.tsc);
    CHECK(c.description == "tsc (ONLINEWS_CLOCK=tsc; the kernel's clocksource is hpet)" + kInterpolated);
    CHECK(c.warning == "ONLINEWS_CLOCK=tsc: this processor does not report an invariant TSC (constant_tsc and "
                       "nonstop_tsc in /proc/cpuinfo): times within an epoch may be off");
  }

  c = choose_clock("rdtsc", "tsc", kInvariant, true);
  CHECK(c.warning == "ONLINEWS_CLOCK='rdtsc' is not auto, tsc or monotonic; using auto");
  CHECK(c.tsc);  // (auto's choice)

  // No TSC (not x86): CLOCK_MONOTONIC whatever is asked, with a warning if
  // the TSC was.
  c = choose_clock("tsc", "arch_sys_counter", "", false);
  CHECK_FALSE(c.tsc);
  CHECK(c.description == "CLOCK_MONOTONIC");
  CHECK(c.warning == "ONLINEWS_CLOCK=tsc: this processor has no TSC; using CLOCK_MONOTONIC");
  c = choose_clock(nullptr, "arch_sys_counter", "", false);
  CHECK_FALSE(c.tsc);
  CHECK(c.warning.empty());
}

namespace {
// A counter at `ticks_per_ns` from `raw0`, read at CLOCK_MONOTONIC `ns`.
ClockMapper::Pair at(std::uint64_t ns, double ticks_per_ns, std::uint64_t raw0, std::uint64_t ns0 = 0) {
  return {raw0 + static_cast<std::uint64_t>(std::llround(static_cast<double>(ns - ns0) * ticks_per_ns)), ns};
}
constexpr std::uint64_t kMs = 1'000'000;
}  // namespace

TEST_CASE("TSC readings map to CLOCK_MONOTONIC; read noise is no change of rate", "[clock]") {
  ClockMapper m;
  const double rate = 2.1;  // ticks per ns
  const std::uint64_t raw0 = 123'456'789;
  // Drains every 10 ms, each pair read up to +-2 us off (a preempted read).
  for (int k = 0; k <= 100; ++k) {
    const std::uint64_t ns = 5'000 * kMs + static_cast<std::uint64_t>(k) * 10 * kMs;
    ClockMapper::Pair p = at(ns, rate, raw0, 5'000 * kMs);
    p.ns += (k % 3 == 0) ? 2'000 : 0;
    p.ns -= (k % 5 == 0) ? 2'000 : 0;
    m.advance(p);
  }
  CHECK(m.rate_changes() == 0);
  CHECK(m.slope() == Approx(1 / rate).epsilon(1e-5));  // (4 us over a 1 s baseline)
  // An event 4 ms into the last window: within the pairs' error.
  const std::uint64_t ns = 5'000 * kMs + 1004 * kMs;
  const double mapped = static_cast<double>(m.tsc_to_ns(at(ns, rate, raw0, 5'000 * kMs).raw));
  CHECK(std::abs(mapped - static_cast<double>(ns)) < 4'000);
}

TEST_CASE("a counter that jumps or changes its rate starts the baseline again", "[clock]") {
  const double rate = 2.1;
  const std::uint64_t raw0 = 1'000'000'000;
  const std::uint64_t ns0 = 10'000 * kMs;

  SECTION("a jump forward (a VM restored from a snapshot)") {
    ClockMapper m;
    for (int k = 0; k <= 50; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, raw0, ns0));
    // 2 s of ticks appear between two drains 20 ms apart; each drain is
    // followed 5 us later by another (a window taken right after a
    // relieving drain: its rate is mostly read error, +-40 ns).
    const std::uint64_t jump = static_cast<std::uint64_t>(2e9 * rate);
    for (int k = 51; k <= 60; ++k) {
      ClockMapper::Pair p = at(ns0 + k * 20 * kMs, rate, raw0, ns0);
      p.raw += jump;
      m.advance(p);
      ClockMapper::Pair q = at(ns0 + k * 20 * kMs + 5'000, rate, raw0, ns0);
      q.raw += jump + ((k % 2) != 0 ? 84 : 0);
      q.ns -= (k % 2) != 0 ? 0 : 40;
      m.advance(q);
    }
    CHECK(m.rate_changes() == 1);
    // Later windows map as before the jump: the rate comes from the pairs
    // after it, not from a baseline across it (which would be off by ~0.6 s
    // over 1.2 s of baseline).
    CHECK(m.slope() == Approx(1 / rate).epsilon(1e-5));
    const std::uint64_t ns = ns0 + 60 * 20 * kMs + 7 * kMs;
    const double mapped = static_cast<double>(m.tsc_to_ns(at(ns, rate, raw0, ns0).raw + jump));
    CHECK(std::abs(mapped - static_cast<double>(ns)) < 1'000);
  }
  SECTION("a new rate (a host whose TSC runs at another frequency)") {
    ClockMapper m;
    for (int k = 0; k <= 50; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, raw0, ns0));
    const ClockMapper::Pair last = at(ns0 + 50 * 20 * kMs, rate, raw0, ns0);
    for (int k = 51; k <= 60; ++k) m.advance(at(ns0 + k * 20 * kMs, 2.5, last.raw, last.ns));
    CHECK(m.rate_changes() == 1);
    CHECK(m.slope() == Approx(1 / 2.5).epsilon(1e-6));
  }
  SECTION("a step back within the read error is no change") {
    ClockMapper m;
    for (int k = 0; k <= 5; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, raw0, ns0));
    // The next drain 3 us later, on a vCPU whose TSC is 2 us behind.
    ClockMapper::Pair p = at(ns0 + 5 * 20 * kMs + 3'000, rate, raw0, ns0);
    p.raw -= static_cast<std::uint64_t>(5'000 * rate);
    m.advance(p);
    for (int k = 6; k <= 10; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, raw0, ns0));
    CHECK(m.rate_changes() == 0);
    CHECK(m.slope() == Approx(1 / rate).epsilon(1e-5));
  }
  SECTION("a counter that goes back") {
    ClockMapper m;
    for (int k = 0; k <= 5; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, raw0, ns0));
    // Reset to 1000 ticks 10 ms into the window: readings on both sides of
    // the reset stay in the window (not at 0 ns, before MPI_Init).
    const std::uint64_t reset_ns = ns0 + 5 * 20 * kMs + 10 * kMs;
    m.advance(at(ns0 + 6 * 20 * kMs, rate, 1'000, reset_ns));
    CHECK(m.rate_changes() == 1);
    // One reading 1 ms before the reset, one 1 ms after it: in the window,
    // in their order, each within a ms of its time.
    const std::uint64_t before = m.tsc_to_ns(at(reset_ns - kMs, rate, raw0, ns0).raw);
    const std::uint64_t after = m.tsc_to_ns(at(reset_ns + kMs, rate, 1'000, reset_ns).raw);
    for (const std::uint64_t t : {before, after}) {
      CHECK(t >= ns0 + 5 * 20 * kMs);
      CHECK(t <= ns0 + 6 * 20 * kMs);
    }
    CHECK(before < after);
    CHECK(std::abs(static_cast<double>(before) - static_cast<double>(reset_ns - kMs)) < 1e6);
    CHECK(std::abs(static_cast<double>(after) - static_cast<double>(reset_ns + kMs)) < 1e6);
    for (int k = 7; k <= 12; ++k) m.advance(at(ns0 + k * 20 * kMs, rate, 1'000, reset_ns));
    CHECK(m.rate_changes() == 1);
    CHECK(m.slope() == Approx(1 / rate).epsilon(1e-6));
  }
}
