// The tool's own progress (DESIGN.md §4).  The cut protocol and the epoch
// pipeline advance only at entries of MPI wrappers on the MPI thread, and only when a gate time has passed: an entry with
// nothing due costs one comparison of the timestamp it takes anyway.  The
// work done there never waits for another rank; its time is recorded as the
// tool region onlinews_analysis (when it is long enough to matter, or
// spans a cut).
#pragma once
#include <cstdint>

#include "clock.hpp"

namespace onlinews::rt {

// Raw clock value from which the next entry on this thread runs progress();
// never on threads other than the MPI thread.
extern constinit thread_local std::uint64_t t_progress_gate;
// True on the MPI thread while the pipeline has agreed windows to analyze or
// write and ONLINEWS_PATIENT_WAITS is on: its blocking calls then wait
// patiently (patient.hpp).
extern constinit thread_local bool t_analysis_pending;
// MPI thread: the raw time a progress slice began, while it runs (0
// otherwise).  Its tool region is recorded after it (its Enter earlier
// when a boundary is added inside it); the samples' placer needs to know
// where the application's time ended (pipeline.cpp).
extern constinit thread_local std::uint64_t t_slice_since;
// MPI thread, before it adds a boundary: inside a slice whose region is
// recorded, records the region's Enter now, so that it lies before the
// boundary in the stream (the slice spans the cut like any region) and not
// in the later window before its start (docs/design.md, "Requested cuts").
void slice_enter_before_boundary();
inline bool analysis_pending() { return t_analysis_pending; }

// Out of line: the cut protocol and a slice of the pipeline.  `caller` is
// the application's return address into the wrapper (HDF5 is never
// re-entered from inside HDF5's own MPI calls); `region` the region about to
// be entered (kNoRegion: none).
constexpr std::uint32_t kNoRegion = 0xffffffffu;
void progress(const void* caller, std::uint32_t region);

// The timestamp of an entry, after progress if it was due.
inline std::uint64_t entry_time(const void* caller, std::uint32_t region = kNoRegion) {
  const std::uint64_t t = raw_now();
  if (t < t_progress_gate) return t;
  progress(caller, region);
  return raw_now();
}

// Inside a blocking call whose request is not complete yet (patient.cpp):
// a short slice of the analysis, not recorded as a region (the application
// waits there anyway).  False when nothing is left to do: the call may then
// block in MPI.
bool progress_while_waiting(const void* caller);

// At the end of such a call that ran slices: completes an epoch's append
// left in parts (Pipeline::finish_append).
void progress_wait_done(const void* caller);

// Called once by MPI_Init on the MPI thread: converts the gate intervals to
// raw clock ticks and opens the gate.
void init_progress();

// True while progress() runs for a call made from inside the HDF5 library.
bool progress_inside_hdf5();

}  // namespace onlinews::rt
