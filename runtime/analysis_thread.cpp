#include "analysis_thread.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <system_error>

#include "config.hpp"

namespace onlinews::rt {
namespace {

// Longest stretch the thread holds the pipeline: the MPI thread may take
// the local work over in between (when its buffers fill up, or at
// MPI_Finalize), and stop() waits at most this long.
constexpr std::chrono::nanoseconds kSlice{2'000'000};

std::atomic<AnalysisThread*> g_running{nullptr};

// exit() without MPI_Finalize: the thread must not run on while the
// process tears down what the analysis may still touch.
void stop_at_exit() {
  if (AnalysisThread* t = g_running.exchange(nullptr)) t->stop();
}

// The application's threads per rank: OMP_NUM_THREADS' first level, else 1.
int app_threads() {
  const char* v = std::getenv("OMP_NUM_THREADS");
  if (v == nullptr) return 1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && n > 0 && n < 100000 ? static_cast<int>(n) : 1;
}

}  // namespace

ThreadChoice choose_analysis_thread(const std::string& setting, int ranks_on_node) {
  ThreadChoice out;
  if (parse_bool_text(setting, out.on)) {
    out.why = "ONLINEWS_ANALYSIS_THREAD=" + setting;
    return out;
  }
  std::string v = setting;
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  out.bad = v != "auto";
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int mask = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const bool bound = online > 0 && mask < online;
  const double share = bound ? mask : static_cast<double>(mask) / std::max(ranks_on_node, 1);
  const int need = app_threads();
  out.on = share >= need + 1;
  out.why = "auto: " + std::to_string(mask) + (bound ? " CPUs bound to this rank" : " CPUs shared by " +
                                                   std::to_string(ranks_on_node) + " ranks on this node") +
            ", " + std::to_string(need) + " application thread" + (need == 1 ? "" : "s") + " per rank";
  return out;
}

bool AnalysisThread::start(analysis::Scheduler& sched) {
  sched_ = &sched;
  sched.enable_helper(true);
  // The new thread inherits a mask that blocks every signal.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    sched.enable_helper(false);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!thread_.joinable()) return false;
  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(stop_at_exit); });
  g_running.store(this);
  return true;
}

void AnalysisThread::stop() {
  if (!thread_.joinable()) return;
  AnalysisThread* self = this;
  g_running.compare_exchange_strong(self, nullptr);
  stop_.store(true, std::memory_order_release);
  sched_->wake();
  thread_.join();
  sched_->enable_helper(false);  // the MPI thread runs whatever follows alone
}

void AnalysisThread::run() {
  pthread_setname_np(pthread_self(), "onlinews");
  analysis::Scheduler::mark_helper_thread();
  analysis::Scheduler& sched = *sched_;
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint32_t seen = sched.signal();
    if (sched.try_resume(true, false, kSlice)) continue;
    if (stop_.load(std::memory_order_acquire)) break;
    sched.wait_signal(seen);
  }
}

}  // namespace onlinews::rt
