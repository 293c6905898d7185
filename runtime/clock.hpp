// Timestamps.  The hot path reads a raw counter (the TSC where the kernel
// itself trusts it as its clocksource or ONLINEWS_CLOCK=tsc asks for it,
// CLOCK_MONOTONIC otherwise: choose_clock); raw values become nanoseconds
// only when an epoch drains the buffers, by linear interpolation between
// (raw, CLOCK_MONOTONIC) pairs taken at consecutive drains.  Each window is
// thus pinned to the system's monotonic clock at its start (and meets it at
// its end within the pairs' error while the rate holds), and the per-event
// cost is one rdtsc instead of a clock_gettime call.
#pragma once
#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
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
    check_rate();
    if (cur_.raw > base_.raw && cur_.ns > base_.ns && cur_.ns - base_.ns >= 1'000'000) {
      slope_ = static_cast<double>(cur_.ns - base_.ns) / static_cast<double>(cur_.raw - base_.raw);
    } else if (cur_.raw > prev_.raw && cur_.ns > prev_.ns) {
      slope_ = static_cast<double>(cur_.ns - prev_.ns) / static_cast<double>(cur_.raw - prev_.raw);
    }
  }
  // Times the counter and CLOCK_MONOTONIC disagreed on the rate: the
  // counter jumped or went back (a VM restored from a snapshot), or changed
  // its rate (migrated to a host whose TSC runs at another rate, without
  // TSC scaling); or NTP slewed CLOCK_MONOTONIC fast (chrony: up to 8 %),
  // which the mapping then follows.
  std::uint64_t rate_changes() const { return rate_changes_; }
  std::uint64_t to_ns(std::uint64_t raw) const { return g_use_tsc ? tsc_to_ns(raw) : raw; }
  // ... when the raw clock is the TSC.
  std::uint64_t tsc_to_ns(std::uint64_t raw) const {
    // (Through int64: both values stay below 2^63, and x86-64 converts
    // signed integers in one instruction, unsigned ones in about ten.)
    const auto since = static_cast<std::int64_t>(raw - prev_.raw);
    double ns = static_cast<double>(static_cast<std::int64_t>(prev_.ns)) + static_cast<double>(since) * slope_;
    if (went_back_) {
      // A window in which the counter went back: readings before the reset
      // count from the window's start, readings after it (below prev_.raw)
      // back from its end, so that a thread's events stay in order; none
      // may leave the window.
      if (since < 0) {
        ns = static_cast<double>(static_cast<std::int64_t>(cur_.ns)) +
             static_cast<double>(static_cast<std::int64_t>(raw - cur_.raw)) * slope_;
      }
      ns = std::min(std::max(ns, static_cast<double>(prev_.ns)), static_cast<double>(cur_.ns));
    }
    return ns > 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(ns)) : 0;
  }
  double slope() const { return slope_; }

 private:
  // The long baseline is only right while the counter keeps one rate: if
  // the latest interval's ticks, at the baseline's rate, miss its
  // CLOCK_MONOTONIC length by more than the pairs' read error can explain
  // (50 us, and 0.1 % of the interval), the baseline starts again at the
  // latest pair.  The window between the two pairs, which holds the
  // change, is mapped at that interval's own rate (so it meets
  // CLOCK_MONOTONIC at both ends); the windows after it from the new
  // baseline.  Checked only once the baseline spans 10 ms:
  // right after a start (or a restart) the next drain may come
  // microseconds later, and a rate over that is mostly read error.  (A
  // slow drift below the thresholds goes unseen: each window stays pinned
  // at its start, and is off at its end by the drift over one window.)
  static constexpr double kReadErrorNs = 50'000;         // a pair's error, at most
  static constexpr std::uint64_t kMinBaselineNs = 10'000'000;  // before the first check
  void check_rate() {
    // (A step back within the read error -- vCPUs whose TSCs are a little
    // out of step, read microseconds apart -- is none.)
    const double back = cur_.raw < prev_.raw ? static_cast<double>(prev_.raw - cur_.raw) * slope_ : 0.0;
    went_back_ = back > kReadErrorNs;
    bool changed = went_back_;
    if (!changed && cur_.raw >= prev_.raw && prev_.ns >= base_.ns + kMinBaselineNs && cur_.ns > prev_.ns) {
      const double interval = static_cast<double>(cur_.ns - prev_.ns);
      const double predicted = static_cast<double>(cur_.raw - prev_.raw) * slope_;
      const double off = predicted > interval ? predicted - interval : interval - predicted;
      changed = off > kReadErrorNs && off > 1e-3 * interval;
    }
    if (changed) {
      base_ = cur_;
      ++rate_changes_;
    }
  }

  Pair base_{}, prev_{}, cur_{};
  bool have_prev_ = false;
  double slope_ = 1.0;  // ns per tick; refined at every window
  std::uint64_t rate_changes_ = 0;
  bool went_back_ = false;  // the counter went back between prev_ and cur_
};

// The counter raw_now() reads, from ONLINEWS_CLOCK (`setting`: auto, tsc or
// monotonic; nullptr = auto), the kernel's current clocksource (empty if
// unknown) and the processor's flags (/proc/cpuinfo: a warning if tsc is
// asked for without an invariant TSC).  auto takes the TSC where the
// kernel's clocksource is tsc.
struct ClockChoice {
  bool tsc = false;
  std::string description;  // the file's `clock` attribute
  std::string warning;      // empty, or one line for the user
};
ClockChoice choose_clock(const char* setting, const std::string& clocksource, const std::string& cpu_flags,
                         bool have_tsc);
std::string kernel_clocksource();  // (empty if unknown)
std::string cpu_flags();           // the first processor's, space-separated (empty if unknown)

// Decides whether the TSC is used (choose_clock, this process's own
// ONLINEWS_CLOCK) and takes the first (raw, CLOCK_MONOTONIC) pair, the
// start of the rate's baseline.  Returns a short
// description for the output's `clock` attribute, in a static buffer that
// the next call overwrites; `warning` gets choose_clock's, if any.
const char* init_clock(ClockMapper& mapper, std::string& warning);

}  // namespace onlinews::rt
