// Sampling's second half (docs/design.md, "Sampling"): the samples a
// thread's SIGPROF handler took (sampling.hpp) become regions in that
// thread's event stream, where the analysis sees them like any other
// region -- computation, delay costs and the critical path are then broken
// down by sampled function without the analysis knowing about samples.
//
// A sample is the time and the interrupted instruction.  It stands for the
// wall time closer to it than to its neighbours in the stream -- halfway to
// the previous and the next sample, up to the previous and the next event
// -- but at most `half` on either side (ONLINEWS_SAMPLING's period times 2,
// at least 10 ms: a thread that slept or blocked outside MPI was not
// sampled, and that time stays with the enclosing region).  Each instant
// thus goes to the nearest sample, and a function's share of the time is
// unbiased at its boundaries.  Consecutive samples of one function whose
// spans touch become one visit.  Only samples inside computation are placed
// (the innermost open region is the root, a user region or an OpenMP
// construct whose time is computation); one inside an MPI call, an OpenMP
// wait or onlinews' own work is counted and left out.
//
// Used by the pipeline on the MPI thread, one placer per location; no MPI,
// so that unit tests drive it with hand-built streams.
#pragma once
#include <cstdint>
#include <vector>

#include "event.hpp"

namespace onlinews::rt {

struct Sample {
  std::uint64_t time;  // raw clock (mapped like the events when placed: SampleNames::to_ns)
  std::uint64_t pc;    // the interrupted instruction
};

// What the placer asks about regions, code addresses and times.
class SampleNames {
 public:
  virtual ~SampleNames() = default;
  // A sample's raw time in the events' time base, as mapped now: a sample
  // is mapped when it is placed, with the events of that drain (held ones
  // too, so that no mapping between two drains reorders them).
  virtual std::uint64_t to_ns(std::uint64_t raw) { return raw; }
  // `pc` lies in onlinews' own code (never computation: a slice of the
  // tool's work before its region is recorded).
  virtual bool in_tool(std::uint64_t /*pc*/) { return false; }
  // A sample whose innermost open region is `region` lies in computation.
  virtual bool computes(std::uint32_t region) = 0;
  // The sampled region of the function at `pc` (kFilteredRegion: the
  // function is filtered out, its time stays with the enclosing region).
  virtual std::uint32_t region_of(std::uint64_t pc) = 0;
};

class SamplePlacer {
 public:
  explicit SamplePlacer(std::uint64_t half_ns) : half_(half_ns) {}

  // `events[first..]` were just appended (times mapped), `fresh` the
  // samples taken from the thread's ring since the last call (in time
  // order, raw times).  Places every sample that lies before an event of
  // the stream; later ones wait for the next event.
  void place(std::vector<Event>& events, std::size_t first, const std::vector<Sample>& fresh, SampleNames& names);
  // Keeps samples without placing them (the thread's ring fills up while
  // its events stay in its buffer).
  void hold(const std::vector<Sample>& fresh) { held_.insert(held_.end(), fresh.begin(), fresh.end()); }
  // A window ends at `t` and every event of the stream before `until`
  // (<= t) has been appended: the held samples before `until` are placed
  // now (appended to `events`); those from `until` to `t`, and samples
  // before `t` that come later, are dropped (their window is gone).  The
  // next visit begins at `t` or later.  (`until` < t: the stream's thread
  // is in a part of a call not recorded yet -- the tool's own slice, or an
  // MPI poll whose Enter follows its return.)
  void flush(std::vector<Event>& events, std::uint64_t t, std::uint64_t until, SampleNames& names);

  std::uint64_t placed() const { return placed_; }    // in computation (also of filtered functions)
  std::uint64_t outside() const { return outside_; }  // in MPI, OpenMP waits, the tool, or no region
  std::uint64_t late() const { return late_; }        // before an event or a window end already passed
  std::size_t held() const { return held_.size(); }

 private:
  // Places held_[h..] up to (not including) time `limit`; returns the new h.
  std::size_t place_before(std::vector<Event>& events, std::uint64_t limit, std::size_t h, SampleNames& names);
  void track(const Event& e, SampleNames& names);

  std::uint64_t half_;
  std::vector<std::uint8_t> open_;  // per open region, innermost last: is it computation?
  std::vector<Sample> held_;        // not placed yet, in time order
  std::vector<Event> added_;        // place(): the batch's events (kept: no allocation per batch)
  std::uint64_t bound_ = 0;         // latest event, placed span end or flushed window end of the stream
  std::uint64_t placed_ = 0, outside_ = 0, late_ = 0;
};

}  // namespace onlinews::rt
