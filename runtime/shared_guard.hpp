// Under MPI_THREAD_MULTIPLE any thread may be inside an MPI call, so the
// tables the wrappers share -- requests, communicators, matched probes -- are
// guarded by one spin lock.  At lower thread levels at most one thread is in
// MPI at a time (the application guarantees it), and the guard is one
// predictable branch.  Never hold it across an MPI call: another thread of
// this process may need it to finish the call that MPI call waits for.
#pragma once
#include <atomic>

namespace onlinews::rt {

// True when MPI_Init_thread provided MPI_THREAD_MULTIPLE (set once, before
// recording starts).
extern std::atomic<bool> g_threads_share_mpi;

class SharedGuard {
 public:
  SharedGuard() : on_(g_threads_share_mpi.load(std::memory_order_relaxed)) {
    if (!on_) return;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) pause();
    }
  }
  ~SharedGuard() {
    if (on_) locked_.store(false, std::memory_order_release);
  }
  SharedGuard(const SharedGuard&) = delete;
  SharedGuard& operator=(const SharedGuard&) = delete;

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  static std::atomic<bool> locked_;
  bool on_;
};

}  // namespace onlinews::rt
