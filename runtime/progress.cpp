#include "progress.hpp"

#include <dlfcn.h>
#include <hdf5.h>
#include <link.h>

#include <algorithm>
#include <chrono>

#include "cut_protocol.hpp"
#include "pipeline.hpp"
#include "regions.hpp"
#include "state.hpp"

namespace onlinews::rt {

thread_local std::uint64_t t_progress_gate = UINT64_MAX;

namespace {

// Gates, in ns (converted to raw ticks by init_progress()).
constexpr double kIdleGateNs = 100'000;   // nothing to analyze: poll the cut protocol
constexpr double kRemoteGateNs = 5'000;   // the analysis waits for other ranks' messages
constexpr double kRecordNs = 2'000;       // shorter progress is not recorded as a region
// Local analysis work per entry, and the share of the MPI thread's time it
// may take while the buffers have room (it takes what it needs otherwise).
constexpr std::chrono::nanoseconds kSlice{500'000};
constexpr double kDutyRatio = 1.0;        // next gate after a slice of length L: L * kDutyRatio later

double g_ticks_per_ns = 1.0;
std::uintptr_t g_hdf5_lo = 0, g_hdf5_hi = 0;  // text of libhdf5 (0: unknown)
bool t_inside_hdf5 = false;                   // MPI thread only

std::uint64_t ticks(double ns) { return static_cast<std::uint64_t>(ns * g_ticks_per_ns); }

// The executable segment of the shared object that contains H5open.
void find_hdf5() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&H5open), &info) == 0 || info.dli_fbase == nullptr) return;
  struct Range {
    std::uintptr_t base, lo = 0, hi = 0;
  } r{reinterpret_cast<std::uintptr_t>(info.dli_fbase)};
  dl_iterate_phdr(
      [](dl_phdr_info* p, std::size_t, void* data) {
        auto* r = static_cast<Range*>(data);
        for (int i = 0; i < p->dlpi_phnum; ++i) {
          const auto& ph = p->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          const std::uintptr_t lo = p->dlpi_addr + ph.p_vaddr;
          if (p->dlpi_addr != r->base && lo > r->base) continue;
          if (p->dlpi_addr == r->base) {
            r->lo = lo;
            r->hi = lo + ph.p_memsz;
            return 1;
          }
        }
        return 0;
      },
      &r);
  g_hdf5_lo = r.lo;
  g_hdf5_hi = r.hi;
}

}  // namespace

bool progress_inside_hdf5() { return t_inside_hdf5; }

void init_progress() {
  const ClockMapper::Pair a = ClockMapper::sample();
  // The TSC rate is refined at every drain; a first estimate is enough here.
  const std::uint64_t t0 = monotonic_ns();
  while (monotonic_ns() - t0 < 200'000) {
  }
  const ClockMapper::Pair b = ClockMapper::sample();
  if (b.ns > a.ns && b.raw > a.raw) g_ticks_per_ns = static_cast<double>(b.raw - a.raw) / static_cast<double>(b.ns - a.ns);
  find_hdf5();
  t_progress_gate = raw_now();
}

void progress(const void* caller, std::uint32_t region) {
  State* s = state();
  if (s == nullptr || t_in_tool > 0 || s->pipeline == nullptr) {
    t_progress_gate = UINT64_MAX;
    return;
  }
  const std::uint64_t t0 = raw_now();
  const auto a = reinterpret_cast<std::uintptr_t>(caller);
  t_inside_hdf5 = g_hdf5_hi != 0 && a >= g_hdf5_lo && a < g_hdf5_hi;
  Pipeline::Wait w;
  {
    ToolScope tool;
    s->pipeline->relieve();
    s->cuts->poll();
    // While the MPI thread's buffer fills up, the analysis takes what it
    // needs (local work only: it never waits for another rank here).
    ThreadBuffer* b = s->buffers.at(0);
    const bool pressed = b != nullptr && 4 * s->pipeline->open_events() >= 3 * b->capacity();
    w = s->pipeline->advance(pressed ? std::chrono::nanoseconds(0) : kSlice);
  }
  const std::uint64_t t1 = raw_now();
  // Inside a polling loop (the coming call continues it) the slice stays
  // part of the loop's one visit: the application was waiting there anyway,
  // and a region inside it would end the visit.
  ThreadBuffer* b = t_buffer;
  if (t1 - t0 >= ticks(kRecordNs) && (b == nullptr || !b->polling(region))) {
    record_enter(t0, tool_region_analysis());
    record_leave(t1);
  }
  switch (w) {
    case Pipeline::Wait::Remote: t_progress_gate = t1 + ticks(kRemoteGateNs); break;
    case Pipeline::Wait::Slice: t_progress_gate = t1 + static_cast<std::uint64_t>(kDutyRatio * (t1 - t0)); break;
    case Pipeline::Wait::Done: t_progress_gate = UINT64_MAX; break;
  }
  if (w == Pipeline::Wait::Remote && s->pipeline->backlog() == 0) t_progress_gate = t1 + ticks(kIdleGateNs);
  t_inside_hdf5 = false;
}

}  // namespace onlinews::rt
