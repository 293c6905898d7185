// Stage header of runtime/: process-wide state of the analyzer and the hot
// recording path used by the PMPI wrappers and the user-region API.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "buffer.hpp"
#include "clock.hpp"
#include "event.hpp"

namespace onlinews::rt {

// True between a successful MPI_Init (with ONLINEWS_ENABLE=1) and the start of
// MPI_Finalize.  Written only by the thread that initializes/finalizes MPI;
// read by every thread (acquire: a thread that sees it set sees the state).
extern std::atomic<bool> g_recording;
// > 0 while the calling thread runs onlinews code that calls MPI itself (the
// epoch, HDF5 output): such calls pass straight through the wrappers.
extern constinit thread_local int t_in_tool;

inline bool recording() { return g_recording.load(std::memory_order_acquire) && t_in_tool == 0; }

// Scope in which MPI calls made by onlinews are not recorded.
struct ToolScope {
  ToolScope() { ++t_in_tool; }
  ~ToolScope() { --t_in_tool; }
  ToolScope(const ToolScope&) = delete;
  ToolScope& operator=(const ToolScope&) = delete;
};

// The calling thread's buffer (attached on first use: a new thread starts
// with an implicit Enter of its root region).
// (constinit: no dynamic initializer, so a read is a plain %fs load, with no
// call to the TLS init wrapper that made the hooks spill and reload their
// events' fields around it.)
extern constinit thread_local ThreadBuffer* t_buffer;
ThreadBuffer* attach_thread();

// Inlined into every hook, with the ring's push (event_ring.hpp).
[[gnu::always_inline]] inline void record(const Event& e) {
  ThreadBuffer* b = t_buffer;
  if (b == nullptr) b = attach_thread();
  if (b != nullptr) b->push(e);
}
inline void record_enter(std::uint64_t t, std::uint32_t region, std::int32_t team_size = 0, std::uint64_t team = 0,
                         std::uint8_t flags = 0) {
  record(Event::enter(t, region, team_size, team, flags));
}
inline void record_leave(std::uint64_t t) { record(Event::leave(t)); }

// The executable segment of the loaded object that contains `addr` (0, 0
// if unknown): libhdf5's (progress.cpp), onlinews' own (sampling.cpp).
struct TextRange {
  std::uintptr_t lo = 0, hi = 0;
  bool contains(std::uintptr_t a) const { return a >= lo && a < hi; }
};
TextRange text_range_of(const void* addr);

// Region ids of onlinews' own regions and the root region (after the MPI
// regions; see regions.hpp for user regions).
std::uint32_t tool_region_analysis();  // slices of the asynchronous analysis (progress.cpp)
std::uint32_t tool_region_decide();
std::uint32_t tool_region_setup();
std::uint32_t root_region();

// True on the thread that initialized MPI (the one that drives the tool's
// progress and cuts).
extern constinit thread_local bool t_mpi_thread;
inline bool on_mpi_thread() { return t_mpi_thread; }
// True if this thread's collective, RMA and communicator calls are
// analyzed: every thread's below MPI_THREAD_MULTIPLE (at most one is in MPI
// at a time, and the program orders their calls, so the tool's tables need
// no lock); under MULTIPLE only the MPI thread's, the others' being time
// only (docs/design.md).  Point-to-point calls are analyzed on every thread.
extern std::atomic<bool> g_threads_share_mpi;
// ONLINEWS_CALLSITES: MPI calls record their call site (set at MPI_Init).
extern std::atomic<bool> g_callsites;
inline bool on_analyzed_thread() { return t_mpi_thread || !g_threads_share_mpi.load(std::memory_order_relaxed); }

}  // namespace onlinews::rt
