// Counterpart of runtime/runtime.cpp: the runtime's globals and thread
// attachment, defined in their own translation unit (see probe.h).
#include <vector>

#include "probe.h"
#include "progress.hpp"
#include "runtime.hpp"

namespace onlinews::rt {

std::atomic<bool> g_recording{false};
constinit thread_local int t_in_tool = 0;
constinit thread_local bool t_mpi_thread = true;  // the probe's calls stand for the MPI thread's
std::atomic<bool> g_threads_share_mpi{false};
std::atomic<bool> g_callsites{true};
// The progress gate is checked by every entry as in the library; it never
// opens here (no cut protocol, no pipeline).
constinit thread_local std::uint64_t t_progress_gate = UINT64_MAX;
void progress(const void*, std::uint32_t) {}
constinit thread_local ThreadBuffer* t_buffer = nullptr;
bool g_use_tsc = false;

namespace {
BufferRegistry g_registry;
}

ThreadBuffer* attach_thread() {
  ThreadBuffer* b = g_registry.get_or_create();
  if (b == nullptr) {
    g_registry.note_unregistered_drop();
    return nullptr;
  }
  t_buffer = b;
  return b;
}

}  // namespace onlinews::rt

using namespace onlinews::rt;

extern "C" void onlinews_probe_setup(size_t capacity_events, int use_tsc) {
  g_registry.configure(capacity_events);
  g_use_tsc = use_tsc != 0;
  g_recording.store(true);
}

extern "C" void* onlinews_probe_buffer(void) {
  ThreadBuffer* b = t_buffer;
  return b != nullptr ? b : attach_thread();
}

extern "C" size_t onlinews_probe_drain(void) {
  thread_local std::vector<onlinews::Event> sink;
  ThreadBuffer* b = static_cast<ThreadBuffer*>(onlinews_probe_buffer());
  if (b == nullptr) return 0;
  sink.clear();
  return b->drain(sink);
}

extern "C" uint64_t onlinews_probe_take_dropped(void) {
  ThreadBuffer* b = static_cast<ThreadBuffer*>(onlinews_probe_buffer());
  return b != nullptr ? b->take_dropped() : 0;
}

extern "C" size_t onlinews_probe_free_slots(void) {
  ThreadBuffer* b = static_cast<ThreadBuffer*>(onlinews_probe_buffer());
  if (b == nullptr) return 0;
  const double used = b->fill() * static_cast<double>(b->capacity());
  return b->capacity() - static_cast<size_t>(used + 0.5);
}
