// Which counter the hot path reads (clock.hpp): the decision, apart from the
// files it reads, so that unit tests can give it any machine.
#include <fstream>
#include <sstream>
#include <string>

#include "clock.hpp"

namespace onlinews::rt {
namespace {

bool has_flag(const std::string& flags, const char* flag) {
  std::istringstream is(flags);
  for (std::string f; is >> f;) {
    if (f == flag) return true;
  }
  return false;
}

constexpr const char* kInterpolated = ", interpolated to CLOCK_MONOTONIC at each epoch";

}  // namespace

ClockChoice choose_clock(const char* setting, const std::string& clocksource, const std::string& cpu_flags,
                         bool have_tsc) {
  ClockChoice c;
  std::string mode = setting != nullptr ? setting : "auto";
  if (mode.empty()) mode = "auto";
  if (mode != "auto" && mode != "tsc" && mode != "monotonic") {
    c.warning = "ONLINEWS_CLOCK='" + mode + "' is not auto, tsc or monotonic; using auto";
    mode = "auto";
  }
  const std::string source = clocksource.empty() ? "unknown" : clocksource;
  if (!have_tsc) {
    if (mode == "tsc") c.warning = "ONLINEWS_CLOCK=tsc: this processor has no TSC; using CLOCK_MONOTONIC";
    c.description = "CLOCK_MONOTONIC";
    return c;
  }
  if (mode == "monotonic") {
    c.description = "CLOCK_MONOTONIC (ONLINEWS_CLOCK=monotonic)";
    return c;
  }
  if (mode == "tsc") {
    // The user knows better than the kernel here: typically a VM whose
    // kernel was told not to trust the TSC (clocksource=kvm-clock
    // tsc=unstable) on a host that keeps it invariant and synchronized.
    // Every drain holds it to CLOCK_MONOTONIC, and ClockMapper reports a
    // counter that jumps or changes its rate.
    c.tsc = true;
    c.description = source == "tsc" ? std::string("tsc") + kInterpolated
                                    : "tsc (ONLINEWS_CLOCK=tsc; the kernel's clocksource is " + source + ")" +
                                          kInterpolated;
    if (source != "tsc" && (!has_flag(cpu_flags, "constant_tsc") || !has_flag(cpu_flags, "nonstop_tsc"))) {
      c.warning = "ONLINEWS_CLOCK=tsc: this processor does not report an invariant TSC (constant_tsc and "
                  "nonstop_tsc in /proc/cpuinfo): times within an epoch may be off";
    }
    return c;
  }
  // auto: the TSC only where the kernel itself keeps time with it.  (Under
  // kvm-clock the TSC is often invariant too, but a KVM guest whose kernel
  // trusts its TSC lowers kvm-clock's rating and takes tsc: kvm-clock over
  // an invariant TSC mostly means the TSC was marked unstable.)
  if (source == "tsc") {
    c.tsc = true;
    c.description = std::string("tsc") + kInterpolated;
  } else {
    // Name the clocksource that kept the TSC out: a timestamp then costs a
    // clock_gettime, 2-3x an rdtsc, and whoever compares runs across
    // machines needs to see why.
    c.description = "CLOCK_MONOTONIC (the kernel's clocksource is " + source + ", not tsc)";
  }
  return c;
}

std::string kernel_clocksource() {
  std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return cs >> name ? name : std::string();
}

std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? std::string() : line.substr(colon + 1);
    }
  }
  return {};
}

}  // namespace onlinews::rt
