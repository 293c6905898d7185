// Sampling's first half (ONLINEWS_SAMPLING=<Hz>; docs/design.md,
// "Sampling"): every thread that records events gets a timer on its own
// CPU-time clock (timer_create(CLOCK_THREAD_CPUTIME_ID), signal SIGPROF to
// that thread), and the handler appends (time, interrupted instruction) to
// the thread's sample ring.  The ring is not the event buffer: the handler
// may interrupt the thread in the middle of a push, so it has its own
// single-producer ring (lock-free, async-signal-safe).  The pipeline takes
// the samples out at its drains and places them (sample_placer.hpp).
//
// A CPU-time clock, not wall time: a blocked or sleeping thread is not
// interrupted (its system calls would return EINTR), and the kernel checks
// these timers at its tick, so rates above CONFIG_HZ (250 on Debian) give
// one sample per tick.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sample_placer.hpp"

namespace onlinews::rt {

// MPI_Init (MPI thread): installs the SIGPROF handler for `hz` samples per
// second of a thread's CPU time.  False, with `why`, where it cannot (the
// application handles SIGPROF itself, or no interrupted instruction can be
// read on this architecture).
bool init_sampling(int hz, std::string& why);
extern std::atomic<bool> g_sampling;  // (sampling_on())
inline bool sampling_on() { return g_sampling.load(std::memory_order_relaxed); }
// True once init_sampling() succeeded (also after stop_sampling()).
bool sampling_started();
// The calling thread, just registered as location `index`: its ring and its
// timer (the thread that calls it is the one sampled).
void start_thread_sampling(int index);
// MPI_Finalize (MPI thread): stops every timer; samples taken so far stay.
void stop_sampling();
// False (once; every timer stopped then) if SIGPROF is no longer handled by
// onlinews: the application (or a profiler) installed its own handler
// after MPI_Init, which would now get onlinews' signals.  MPI thread, once
// per window.
bool sampling_handler_intact();
// Moves location `index`'s samples into `out` (raw times; cleared first).
void take_samples(int index, std::vector<Sample>& out);
// Ring occupancy of location `index` in [0, 1].
double sample_fill(int index);
// Samples lost because a ring was full, and threads whose timer could not
// be created (summed over this process's threads).
std::uint64_t samples_lost();
std::uint64_t sampling_failed_threads();
// The span a sample stands for at most on either side (sample_placer.hpp).
std::uint64_t sample_half_span_ns();
// The process's regions and functions as the placers see them (caches by
// region id and by instruction; MPI thread); `to_ns` maps raw times like
// the events of the drain in progress.
std::unique_ptr<SampleNames> make_sample_names(std::function<std::uint64_t(std::uint64_t)> to_ns);

}  // namespace onlinews::rt
