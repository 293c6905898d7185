// Clock offsets between hosts (DESIGN.md §7).  Ranks on one host share
// CLOCK_MONOTONIC; ranks on different hosts do not.  The offset of every
// host ("clock domain") from rank 0's is measured by ping-pong along a tree
// of the hosts' first ranks at MPI_Init and at every synchronizing cut, and
// each window's timestamps are shifted by an offset that is
// interpolated linearly between the measurements at its two ends, so drift
// is followed piecewise instead of by one line through the whole run.
// With a single domain all of this is a no-op.
//
// ONLINEWS_TEST_CLOCK_SKEW="OFFSET_s,DRIFT_ppm[,ERROR_us]" (a test knob) makes
// every rank its own domain and skews its clock: rank r runs r*OFFSET seconds
// ahead and r*DRIFT ppm fast, and its measured offset is off by +ERROR µs
// (even ranks) or -ERROR µs (odd ranks), as an imperfect measurement across a
// network would be (a negative ERROR flips the pattern).  The skew touches only onlinews' timestamps, never the
// application's clocks.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "config.hpp"

namespace onlinews::rt {

class ClockSync {
 public:
  // Collective over `comm` (the tool's world).  `host_of_rank`: host ids
  // numbered densely in order of each host's first rank (host_map() does
  // so).  Takes the first measurement.
  void init(MPI_Comm comm, int rank, const std::vector<int>& host_of_rank, std::uint64_t mono_ref,
            const ClockSkew& skew);

  // Collective: measures the offsets now.  Timestamps recorded since the
  // previous measurement map between the two.
  void sample(MPI_Comm comm);

  // CLOCK_MONOTONIC ns of this rank -> ns on rank 0's clock (an affine map
  // per window, set up by sample()).
  std::uint64_t to_global(std::uint64_t mono_ns) const { return map()(mono_ns); }
  // That map as a value (a drain maps every event with it: a copy in
  // registers instead of a load through the state at each event).
  struct Map {
    double gain, bias;
    std::uint64_t operator()(std::uint64_t mono_ns) const {
      const double g = gain * static_cast<double>(static_cast<std::int64_t>(mono_ns)) + bias;  // (< 2^63: clock.hpp)
      return g > 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(g + 0.5)) : 0;
    }
  };
  Map map() const { return {gain_, bias_}; }

  int domains() const { return static_cast<int>(leader_of_domain_.size()); }
  // Largest |offset| over the domains at the latest measurement (seconds).
  double max_offset_seconds() const { return max_offset_; }
  // Longest round trip of a tree edge (the shortest of its 5) at the latest
  // measurement (seconds).
  double max_rtt_seconds() const { return max_rtt_; }
  // How far the latest measurement's offsets can be off, at most (seconds):
  // a hop's offset is off by at most half its round trip (all of the
  // asymmetry on one way), and a domain's error adds up over the hops of its
  // path to rank 0 (about log2(domains)); the largest over the domains.
  double max_offset_error_seconds() const { return max_error_; }
  const ClockSkew& skew() const { return skew_; }

 private:
  double local(std::uint64_t mono) const;  // mono -> this rank's (possibly skewed) clock, ns
  void measure(MPI_Comm comm);
  std::pair<double, double> ping(MPI_Comm comm, int peer) const;
  void pong(MPI_Comm comm, int peer) const;
  void update_map();

  struct Point {
    double local = 0;   // when (local clock, ns)
    double offset = 0;  // local - global (ns)
  };
  ClockSkew skew_;
  int rank_ = 0;
  int my_domain_ = 0;
  std::vector<int> leader_of_domain_{0};
  double mono_ref_ = 0;
  // The drift (slope) comes from the longest baseline available, not from
  // the last two measurements: cuts can be milliseconds apart, and a few
  // microseconds of measurement noise over such a gap would tilt the map by
  // milliseconds per second.  ref_ is at least kBaselineNs older than cur_
  // once the run is that long (before: the first measurement).
  Point ref_, next_ref_, cur_;
  double gain_ = 1, bias_ = 0;  // global = gain * mono + bias in the current window
  double max_offset_ = 0, max_rtt_ = 0, max_error_ = 0;
};

}  // namespace onlinews::rt
