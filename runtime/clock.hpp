// Timestamps.  The hot path reads a raw counter (the TSC where the kernel
// itself trusts it as its clocksource, CLOCK_MONOTONIC otherwise); raw values
// become nanoseconds only when an epoch drains the buffers, by linear
// interpolation between (raw, CLOCK_MONOTONIC) pairs taken at consecutive
// drains.  Each window is thus pinned to the system's monotonic clock at both
// ends, and the per-event cost is one rdtsc instead of a clock_gettime call.
#pragma once
#include <cstdint>
#include <ctime>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ONLINEWS_HAVE_TSC 1
#else
#define ONLINEWS_HAVE_TSC 0
#endif

namespace onlinews::rt {

inline std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Set once at startup (before any thread records), read-only afterwards.
extern bool g_use_tsc;

inline std::uint64_t raw_now() {
#if ONLINEWS_HAVE_TSC
  if (g_use_tsc) return __rdtsc();
#endif
  return monotonic_ns();
}

// Maps raw counter values to nanoseconds for the events drained since the
// previous pair.  The pipeline drains often (every few milliseconds when
// cuts are frequent), and a rate measured over such a short interval is off
// by the pairs' read error divided by the interval (1e-5 and more): mapped
// times of different ranks would drift apart by microseconds and put
// receives before their sends.  So the rate comes from the longest baseline
// (the first pair to the latest), the offset from the previous pair.
class ClockMapper {
 public:
  struct Pair {
    std::uint64_t raw = 0;
    std::uint64_t ns = 0;
  };
  // Reads a (raw, ns) pair; the raw read is bracketed to bound the error.
  static Pair sample();

  // Events recorded up to now are mapped from the previous pair on.
  void advance(const Pair& now) {
    prev_ = cur_;
    cur_ = now;
    if (!have_prev_) {
      prev_ = base_ = now;
      have_prev_ = true;
    }
    if (cur_.raw > base_.raw && cur_.ns > base_.ns && cur_.ns - base_.ns >= 1'000'000) {
      slope_ = static_cast<double>(cur_.ns - base_.ns) / static_cast<double>(cur_.raw - base_.raw);
    } else if (cur_.raw > prev_.raw && cur_.ns > prev_.ns) {
      slope_ = static_cast<double>(cur_.ns - prev_.ns) / static_cast<double>(cur_.raw - prev_.raw);
    }
  }
  std::uint64_t to_ns(std::uint64_t raw) const { return g_use_tsc ? tsc_to_ns(raw) : raw; }
  // ... when the raw clock is the TSC.
  std::uint64_t tsc_to_ns(std::uint64_t raw) const {
    // (Through int64: both values stay below 2^63, and x86-64 converts
    // signed integers in one instruction, unsigned ones in about ten.)
    const double d = static_cast<double>(static_cast<std::int64_t>(raw - prev_.raw)) * slope_;
    const double ns = static_cast<double>(static_cast<std::int64_t>(prev_.ns)) + d;
    return ns > 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(ns)) : 0;
  }
  double slope() const { return slope_; }

 private:
  Pair base_{}, prev_{}, cur_{};
  bool have_prev_ = false;
  double slope_ = 1.0;  // ns per tick; refined at every window
};

// Decides whether the TSC is used (kernel clocksource is "tsc") and seeds the
// slope estimate.  Returns a short description for the output's `clock` attr
// (without the TSC it names the kernel's clocksource, in a static buffer
// that the next call overwrites).
const char* init_clock(ClockMapper& mapper);

}  // namespace onlinews::rt
