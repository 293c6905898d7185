// A shared library laid out like libonlinews.so's hot path, for measuring the
// per-event cost without MPI (benchmarks/bench_record.cpp).
//
// Why not the real library: its wrappers only record between MPI_Init and
// MPI_Finalize.  Why not just inline runtime.hpp into the benchmark: in
// libonlinews.so the hooks, the thread_local buffer pointer and the clock
// flag live in different translation units of a -fPIC shared library, so
// every recorded event pays a PLT call into the hook, a TLS wrapper call plus
// __tls_get_addr (global-dynamic model) for t_in_tool and t_buffer, and a GOT
// load of g_use_tsc.  The probe reproduces exactly that layout:
//   globals.cpp   <-> runtime/runtime.cpp   (g_use_tsc, t_buffer, t_in_tool, ...)
//   hooks.cpp     <-> runtime/hooks_comm.cpp (pre_plain/post_plain, send-like)
//   wrappers.cpp  <-> the generated mpi_wrappers.gen.cpp (Call record, recording())
// with the same headers (runtime.hpp, hooks.hpp) and the same compile flags.
// Like libonlinews.so it is built with hidden visibility (only the entry
// points below are exported), so its runtime globals are private to it: the
// benchmark executable has its own g_use_tsc and buffer.cpp.
// It links libmpi only because hooks.hpp's Call uses MPI_DATATYPE_NULL & co;
// no MPI function is ever called.
#pragma once
#include <stddef.h>
#include <stdint.h>

#define ONLINEWS_PROBE_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// Sets the clock mode and the per-thread buffer capacity (events) and turns
// recording on.  Call before the first probe_* call of any thread.
ONLINEWS_PROBE_API void onlinews_probe_setup(size_t capacity_events, int use_tsc);
// The calling thread's buffer (created on first use), as the runtime does.
ONLINEWS_PROBE_API void* onlinews_probe_buffer(void);
// Drains the calling thread's buffer; returns the number of events removed.
ONLINEWS_PROBE_API size_t onlinews_probe_drain(void);
// Events dropped by the calling thread's buffer since the last call.
ONLINEWS_PROBE_API uint64_t onlinews_probe_take_dropped(void);
// Writable slots left in the calling thread's buffer.
ONLINEWS_PROBE_API size_t onlinews_probe_free_slots(void);

// Wrapper-shaped entry points (what an intercepted call costs on top of the
// MPI call itself):
//   plain_call: like the MPI_Iprobe wrapper (plain hook): Enter + Leave = 2 events.
//   send_call:  like the MPI_Send wrapper minus the communicator lookup and
//               PMPI_Type_size: Enter + Send + Leave = 3 events.
ONLINEWS_PROBE_API void onlinews_probe_plain_call(void);
ONLINEWS_PROBE_API void onlinews_probe_send_call(int dest, int tag, int count);

#ifdef __cplusplus
}
#endif
