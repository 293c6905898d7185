// Compiler instrumentation: code built with -finstrument-functions calls
// __cyg_profile_func_enter/exit around every function; libonlinews provides
// them, and each function becomes a user region named after it (demangled),
// unless ONLINEWS_FILTER skips it.  Calls happen on any thread, often.
//
// The hot path: a thread-local direct-mapped cache from the function's
// address to its region (or "filtered"), and a thread-local stack of the
// open calls (address, recorded or not), so that an exit leaves exactly the
// regions its enter opened.  An exit whose function is not on top (frames
// skipped by longjmp, or by exceptions where the compiler calls no exit
// hook on unwinding) first closes the frames above it; an exit of a
// function not on the stack (entered before MPI_Init or too deep) records
// nothing.  Calls deeper than the stack are not recorded.  A hook running
// inside another (instrumented code called by the hook's own work, or a
// signal handler interrupting it) only keeps the depth.  Only the first
// call of a function on a thread misses the cache and takes a lock; the
// first call in the process also names it (function_name(): about a
// millisecond to open, then a lookup).
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "regions.hpp"
#include "runtime.hpp"

namespace onlinews::rt {
namespace {

constexpr std::size_t kCache = 256;
struct Slot {
  const void* fn = nullptr;
  std::uint32_t region = kFilteredRegion;
};
constexpr std::uint32_t kDepth = 1024;
constexpr std::uint32_t kSearch = 64;  // frames an exit looks down for its function
struct Calls {
  Slot cache[kCache];
  const void* fn[kDepth];                   // open calls, innermost last
  std::uint64_t recorded[kDepth / 64];      // ... whether each was recorded
  std::uint32_t depth;                      // entries in fn[]
  std::uint32_t overflow;                   // open calls beyond kDepth
  bool busy;                                // inside a hook
};
constinit thread_local Calls t_calls{};

bool recorded_at(const Calls& c, std::uint32_t d) { return (c.recorded[d / 64] >> (d % 64) & 1) != 0; }

std::mutex g_mu;
std::unordered_map<const void*, std::uint32_t>* g_regions = nullptr;  // by function address (g_mu)

[[gnu::no_instrument_function, gnu::noinline]] std::uint32_t resolve(const void* fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_regions == nullptr) g_regions = new std::unordered_map<const void*, std::uint32_t>();
  auto it = g_regions->find(fn);
  if (it != g_regions->end()) return it->second;
  const std::string name = function_name(reinterpret_cast<std::uintptr_t>(fn));
  // (user_region keeps its own copy of the name, and applies ONLINEWS_FILTER.)
  const std::uint32_t region = user_region(name.c_str());
  g_regions->emplace(fn, region);
  return region;
}

[[gnu::no_instrument_function, gnu::always_inline]] inline std::uint32_t region_of(const void* fn) {
  Slot& s = t_calls.cache[(reinterpret_cast<std::uintptr_t>(fn) >> 4) % kCache];
  if (s.fn != fn) s = {fn, resolve(fn)};
  return s.region;
}

}  // namespace

}  // namespace onlinews::rt

extern "C" {

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(void* fn, void*) {
  using namespace onlinews::rt;
  Calls& c = t_calls;
  if (c.depth >= kDepth) {
    ++c.overflow;
    return;
  }
  bool on = false;
  if (!c.busy && recording()) {
    c.busy = true;
    const std::uint32_t region = region_of(fn);
    if (region != kFilteredRegion) {
      record_enter(raw_now(), region);
      on = true;
    }
    c.busy = false;
  }
  const std::uint32_t d = c.depth++;
  c.fn[d] = fn;
  const std::uint64_t bit = std::uint64_t{1} << (d % 64);
  c.recorded[d / 64] = on ? (c.recorded[d / 64] | bit) : (c.recorded[d / 64] & ~bit);
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(void* fn, void*) {
  using namespace onlinews::rt;
  Calls& c = t_calls;
  if (c.overflow > 0) {
    --c.overflow;
    return;
  }
  // Find the call on the stack (normally the top).
  std::uint32_t k = c.depth;
  while (k > 0 && c.depth - k < kSearch && c.fn[k - 1] != fn) --k;
  if (k == 0 || c.fn[k - 1] != fn) return;  // (not entered here)
  const bool on = !c.busy && recording();
  if (on) c.busy = true;
  while (c.depth >= k) {
    --c.depth;
    if (on && recorded_at(c, c.depth)) record_leave(raw_now());
  }
  if (on) c.busy = false;
}

}  // extern "C"
