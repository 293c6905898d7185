#include "sampling.hpp"

#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "buffer.hpp"
#include "clock.hpp"
#include "regions.hpp"
#include "runtime.hpp"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

namespace onlinews::rt {
namespace {

// One thread's samples: the SIGPROF handler on that thread produces, the
// pipeline (MPI thread) consumes.  Atomics only: the handler may run at
// any point of the thread, the consumer at any time.
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the signal handler uses these atomics");

class SampleRing {
 public:
  // (Uninitialized storage: pages are touched only when written.)
  explicit SampleRing(std::size_t capacity)
      : slots_(static_cast<Sample*>(::operator new(capacity * sizeof(Sample)))), mask_(capacity - 1) {}
  void push(std::uint64_t time, std::uint64_t pc) {
    const std::uint64_t w = write_.load(std::memory_order_relaxed);
    if (w - read_.load(std::memory_order_acquire) > mask_) {
      lost_.store(lost_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    slots_[w & mask_] = {time, pc};
    write_.store(w + 1, std::memory_order_release);
  }
  void take(std::vector<Sample>& out) {
    std::uint64_t r = read_.load(std::memory_order_relaxed);
    const std::uint64_t w = write_.load(std::memory_order_acquire);
    for (; r < w; ++r) out.push_back(slots_[r & mask_]);
    read_.store(r, std::memory_order_release);
  }
  double fill() const {
    const std::uint64_t w = write_.load(std::memory_order_acquire);
    return static_cast<double>(w - read_.load(std::memory_order_relaxed)) / static_cast<double>(mask_ + 1);
  }
  std::uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

 private:
  Sample* slots_;  // (never freed: a signal may still arrive while the process ends)
  std::uint64_t mask_;
  std::atomic<std::uint64_t> write_{0}, read_{0}, lost_{0};
};

std::uint64_t g_period_ns = 0;
std::size_t g_capacity = 0;
std::atomic<SampleRing*> g_rings[kMaxThreads] = {};
std::mutex g_timers_mu;  // timers are created, armed and deleted under it
timer_t g_timers[kMaxThreads];
bool g_timing[kMaxThreads] = {};  // g_timers[i] is a live timer (g_timers_mu)
std::atomic<std::uint64_t> g_failed{0};
// (initial-exec: the handler's TLS read must not go through
// __tls_get_addr, which may allocate.)
[[gnu::tls_model("initial-exec")]] constinit thread_local SampleRing* t_ring = nullptr;

std::uint64_t interrupted_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}
constexpr bool kHavePc =
#if defined(__x86_64__) || defined(__aarch64__)
    true;
#else
    false;
#endif

// Runs on the sampled thread, at any instruction of it: async-signal-safe
// (a TLS read of a pointer set before the timer started, the clock, the
// ring's atomics).
void on_sigprof(int, siginfo_t*, void* context) {
  SampleRing* r = t_ring;
  if (r == nullptr || !g_sampling.load(std::memory_order_relaxed)) return;
  const int saved = errno;
  r->push(raw_now(), interrupted_pc(context));
  errno = saved;
}

class ProcessNames final : public SampleNames {
 public:
  explicit ProcessNames(std::function<std::uint64_t(std::uint64_t)> to_ns)
      : to_ns_(std::move(to_ns)), tool_(text_range_of(reinterpret_cast<const void*>(&init_sampling))) {}
  std::uint64_t to_ns(std::uint64_t raw) override { return to_ns_(raw); }
  bool in_tool(std::uint64_t pc) override { return tool_.contains(pc); }
  bool computes(std::uint32_t region) override {
    if (region >= computes_.size()) computes_.resize(region + 1, -1);
    if (computes_[region] < 0) computes_[region] = region_computes(region) ? 1 : 0;
    return computes_[region] != 0;
  }
  std::uint32_t region_of(std::uint64_t pc) override {
    auto it = by_pc_.find(pc);
    if (it != by_pc_.end()) return it->second;
    const std::uint32_t region = sampled_region(function_name(pc));
    by_pc_.emplace(pc, region);
    return region;
  }

 private:
  std::function<std::uint64_t(std::uint64_t)> to_ns_;
  TextRange tool_;                     // libonlinews' code
  std::vector<std::int8_t> computes_;  // by region id (-1: not asked yet)
  std::unordered_map<std::uint64_t, std::uint32_t> by_pc_;
};

}  // namespace

std::atomic<bool> g_sampling{false};

std::unique_ptr<SampleNames> make_sample_names(std::function<std::uint64_t(std::uint64_t)> to_ns) {
  return std::make_unique<ProcessNames>(std::move(to_ns));
}

bool init_sampling(int hz, std::string& why) {
  if (hz <= 0) return false;
  if (!kHavePc) {
    why = "reading the interrupted instruction is not supported on this architecture";
    return false;
  }
  struct sigaction old {};
  if (sigaction(SIGPROF, nullptr, &old) != 0) {
    why = std::string("sigaction failed: ") + std::strerror(errno);
    return false;
  }
  const bool taken = (old.sa_flags & SA_SIGINFO) != 0 ? old.sa_sigaction != nullptr : old.sa_handler != SIG_DFL;
  if (taken) {
    why = "the application (or another tool, such as gprof) handles SIGPROF itself";
    return false;
  }
  struct sigaction sa {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, nullptr) != 0) {
    why = std::string("sigaction failed: ") + std::strerror(errno);
    return false;
  }
  g_period_ns = 1'000'000'000ull / static_cast<std::uint64_t>(hz);
  // Room for 16 s of CPU time between two drains (a window's cut drains
  // every ring; ONLINEWS_EPOCH_SECONDS is 5 by default), at the rate the
  // kernel can deliver (its tick: 1000 Hz at most).
  const std::size_t rate = static_cast<std::size_t>(std::min(hz, 1000));
  g_capacity = 1024;
  while (g_capacity < rate * 16) g_capacity *= 2;
  g_sampling.store(true, std::memory_order_release);
  return true;
}

bool sampling_started() { return g_period_ns != 0; }

void start_thread_sampling(int index) {
  if (!sampling_on() || index < 0 || index >= kMaxThreads || t_ring != nullptr) return;
  auto* ring = new (std::nothrow) SampleRing(g_capacity);
  if (ring == nullptr) {
    g_failed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_rings[index].store(ring, std::memory_order_release);
  t_ring = ring;
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev.sigev_notify_thread_id = static_cast<pid_t>(gettid());
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(g_period_ns / 1'000'000'000ull);
  its.it_interval.tv_nsec = static_cast<long>(g_period_ns % 1'000'000'000ull);
  its.it_value = its.it_interval;
  // (Under the lock, and only while sampling is on: stop_sampling() then
  // sees every timer that was armed, and deletes none that is being set.)
  std::lock_guard<std::mutex> lock(g_timers_mu);
  timer_t id{};
  if (!sampling_on()) return;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &id) != 0) {
    g_failed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (timer_settime(id, 0, &its, nullptr) != 0) {
    timer_delete(id);
    g_failed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_timers[index] = id;
  g_timing[index] = true;
}

void stop_sampling() {
  std::lock_guard<std::mutex> lock(g_timers_mu);
  if (!g_sampling.exchange(false)) return;
  for (int i = 0; i < kMaxThreads; ++i) {
    if (g_timing[i]) timer_delete(g_timers[i]);
    g_timing[i] = false;
  }
  // (The handler stays: a signal already pending must not end the process,
  // which SIGPROF's default action would.)
}

bool sampling_handler_intact() {
  if (!sampling_on()) return true;
  struct sigaction now {};
  if (sigaction(SIGPROF, nullptr, &now) != 0) return true;
  if ((now.sa_flags & SA_SIGINFO) != 0 && now.sa_sigaction == on_sigprof) return true;
  stop_sampling();
  return false;
}

namespace {
SampleRing* ring_at(int index) {
  return index >= 0 && index < kMaxThreads ? g_rings[index].load(std::memory_order_acquire) : nullptr;
}
}  // namespace

void take_samples(int index, std::vector<Sample>& out) {
  out.clear();
  if (SampleRing* r = ring_at(index)) r->take(out);
}

double sample_fill(int index) {
  const SampleRing* r = ring_at(index);
  return r != nullptr ? r->fill() : 0.0;
}

std::uint64_t samples_lost() {
  std::uint64_t n = 0;
  for (const auto& slot : g_rings) {
    if (const SampleRing* r = slot.load(std::memory_order_acquire)) n += r->lost();
  }
  return n;
}

std::uint64_t sampling_failed_threads() { return g_failed.load(std::memory_order_relaxed); }

std::uint64_t sample_half_span_ns() { return std::max<std::uint64_t>(2 * g_period_ns, 10'000'000); }

}  // namespace onlinews::rt
