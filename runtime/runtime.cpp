// Globals of the runtime, thread attachment, logging and the public C API.
#include "runtime.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "include/onlinews.h"
#include "regions.hpp"
#include "sampling.hpp"
#include "shared_guard.hpp"
#include "state.hpp"

namespace onlinews::rt {

std::atomic<bool> g_recording{false};
std::atomic<bool> g_threads_share_mpi{false};
std::atomic<bool> g_callsites{true};
std::atomic<bool> SharedGuard::locked_{false};
constinit thread_local int t_in_tool = 0;
constinit thread_local ThreadBuffer* t_buffer = nullptr;
bool g_use_tsc = false;

constinit thread_local bool t_mpi_thread = false;
namespace {
std::atomic<State*> g_state{nullptr};
}  // namespace

State* state() { return g_state.load(std::memory_order_acquire); }
void set_state(State* s) { g_state.store(s, std::memory_order_release); }
void mark_mpi_thread() { t_mpi_thread = true; }

ThreadBuffer* attach_thread() {
  State* s = state();
  if (s == nullptr) return nullptr;
  ThreadBuffer* b = s->buffers.get_or_create();
  if (b == nullptr) {
    s->buffers.note_unregistered_drop();
    return nullptr;
  }
  t_buffer = b;
  start_thread_sampling(b->thread_index());
  // Every location starts in its root region.
  if (!t_mpi_thread) b->push(Event::enter(raw_now(), root_region()));
  return b;
}

TextRange text_range_of(const void* addr) {
  Dl_info info;
  if (dladdr(addr, &info) == 0 || info.dli_fbase == nullptr) return {};
  struct Search {
    std::uintptr_t base;
    TextRange range;
  } search{reinterpret_cast<std::uintptr_t>(info.dli_fbase), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* p, std::size_t, void* data) {
        auto* r = static_cast<Search*>(data);
        for (int i = 0; i < p->dlpi_phnum; ++i) {
          const auto& ph = p->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          const std::uintptr_t lo = p->dlpi_addr + ph.p_vaddr;
          if (p->dlpi_addr != r->base && lo > r->base) continue;
          if (p->dlpi_addr == r->base) {
            r->range = {lo, lo + ph.p_memsz};
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.range;
}

void log_warning(const std::string& msg, bool rank0_only) {
  State* s = state();
  if (rank0_only && s != nullptr && s->rank != 0) return;
  if (!rank0_only && s != nullptr) {
    std::fprintf(stderr, "onlinews: warning (rank %d): %s\n", s->rank, msg.c_str());
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr, "onlinews: warning: %s\n", msg.c_str());
  std::fflush(stderr);
}

void log_info(const std::string& msg) {
  State* s = state();
  if (s == nullptr || s->rank != 0 || s->cfg.verbose < 1) return;
  std::fprintf(stderr, "onlinews: %s\n", msg.c_str());
  std::fflush(stderr);
}

MPI_Status* scratch_statuses(int n) {
  thread_local std::vector<MPI_Status> scratch;
  if (n < 0) n = 0;
  if (scratch.size() < static_cast<std::size_t>(n)) scratch.resize(static_cast<std::size_t>(n) + 16);
  return scratch.data();
}

ClockMapper::Pair ClockMapper::sample() {
  // Bracket the monotonic read between two raw reads and take the midpoint;
  // of several tries keep the tightest bracket.  A rank preempted between
  // the reads (oversubscribed nodes) would otherwise map its whole window
  // milliseconds off its neighbours' and put receives before their sends.
  Pair best;
  std::uint64_t width = ~0ull;
  for (int k = 0; k < 16; ++k) {
    const std::uint64_t a = raw_now();
    const std::uint64_t ns = monotonic_ns();
    const std::uint64_t b = raw_now();
    if (b < a || b - a >= width) continue;
    width = b - a;
    best = {a + (b - a) / 2, ns};
  }
  return best;
}

const char* init_clock(ClockMapper& mapper, std::string& warning) {
  // (hooks::pre_init calls this once, in MPI_Init or MPI_Init_thread, on
  // the MPI thread, before any thread records: the environment is this
  // process's own, not yet rank 0's.)
  static std::string what;
  const ClockChoice c =
      choose_clock(std::getenv("ONLINEWS_CLOCK"), kernel_clocksource(), cpu_flags(), ONLINEWS_HAVE_TSC != 0);
  g_use_tsc = c.tsc;
  what = c.description;
  warning = c.warning;
  mapper.advance(ClockMapper::sample());  // (after g_use_tsc: the sample reads the raw clock)
  return what.c_str();
}

}  // namespace onlinews::rt

// ---- public C API (include/onlinews.h) --------------------------------------

namespace {
// Open user regions of this thread, to repair mismatched ends.
constexpr int kUserDepth = 256;
thread_local std::uint32_t t_user_stack[kUserDepth];
thread_local int t_user_depth = 0;
thread_local int t_user_overflow = 0;  // regions beyond kUserDepth (not recorded)
thread_local bool t_warned_unmatched = false;  // each kind of misuse is reported once per thread
thread_local bool t_warned_nesting = false;
}  // namespace

extern "C" void onlinews_region_begin(const char* name) {
  using namespace onlinews::rt;
  if (!recording()) return;
  const std::uint32_t id = user_region(name);
  if (id == kFilteredRegion) return;
  if (t_user_depth >= kUserDepth) {
    ++t_user_overflow;
    return;
  }
  t_user_stack[t_user_depth++] = id;
  record_enter(raw_now(), id);
}

extern "C" void onlinews_region_end(const char* name) {
  using namespace onlinews::rt;
  if (!recording()) return;
  const std::uint32_t id = user_region(name);
  if (id == kFilteredRegion) return;
  if (t_user_overflow > 0) {
    --t_user_overflow;
    return;
  }
  int pos = t_user_depth - 1;
  while (pos >= 0 && t_user_stack[pos] != id) --pos;
  if (pos < 0) {
    if (!t_warned_unmatched) {
      t_warned_unmatched = true;
      log_warning(std::string("onlinews_region_end(\"") + (name ? name : "(null)") +
                      "\") without a matching begin on this thread; ignored (reported once per thread)",
                  false);
    }
    return;
  }
  if (pos != t_user_depth - 1 && !t_warned_nesting) {
    t_warned_nesting = true;
    log_warning(std::string("onlinews_region_end(\"") + (name ? name : "(null)") +
                    "\") closes regions that are still open inside it; they end here (reported once per thread)",
                false);
  }
  const std::uint64_t t = raw_now();
  while (t_user_depth > pos) {
    --t_user_depth;
    record_leave(t);
  }
}

extern "C" int onlinews_active(void) { return onlinews::rt::recording() ? 1 : 0; }
