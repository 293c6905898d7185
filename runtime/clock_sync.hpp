// Clock offsets between hosts (DESIGN.md §7).  Ranks on one host share
// CLOCK_MONOTONIC; ranks on different hosts do not.  Rank 0 measures the
// offset of every other host ("clock domain") by ping-pong at MPI_Init and at
// every epoch, and each window's timestamps are shifted by an offset that is
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
#include <string>
#include <vector>

namespace onlinews::rt {

struct SkewSpec {
  double offset_s = 0, drift_ppm = 0, error_us = 0;
  bool on = false;
};
// Parses the knob; false (and `out` unchanged) if `text` is malformed.
bool parse_skew(const std::string& text, SkewSpec& out);

class ClockSync {
 public:
  // Collective over `comm` (the tool's world).  `host_of_rank`: a host id per
  // rank.  Takes the first measurement.  Returns a warning or "".
  std::string init(MPI_Comm comm, int rank, const std::vector<int>& host_of_rank, std::uint64_t mono_ref);

  // Collective: measures the offsets now.  Timestamps recorded since the
  // previous measurement map between the two.
  void sample(MPI_Comm comm);

  // CLOCK_MONOTONIC ns of this rank -> ns on rank 0's clock.
  std::uint64_t to_global(std::uint64_t mono_ns) const;

  int domains() const { return domains_; }
  // Largest |offset| over the domains at the latest measurement (seconds).
  double max_offset_seconds() const { return max_offset_; }
  // Smallest round trip rank 0 saw at the latest measurement (seconds).
  double max_rtt_seconds() const { return max_rtt_; }
  const SkewSpec& skew() const { return skew_; }

 private:
  double local_now() const;                // this rank's (possibly skewed) clock, ns
  double local(std::uint64_t mono) const;  // mono -> that clock
  void measure(MPI_Comm comm);

  struct Point {
    double local = 0;   // when (local clock, ns)
    double offset = 0;  // local - global (ns)
  };
  SkewSpec skew_;
  int rank_ = 0;
  int domains_ = 1;
  std::vector<int> domain_of_rank_;
  std::vector<int> leader_of_domain_;
  double mono_ref_ = 0;
  Point prev_, cur_;
  double max_offset_ = 0, max_rtt_ = 0;
};

}  // namespace onlinews::rt
