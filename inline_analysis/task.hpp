// Coroutines of the asynchronous replay (DESIGN.md §4).  An epoch's analysis
// is one chain of Task coroutines (run_epoch awaits the matching, which
// awaits a transport operation, ...).  Only its innermost frame is ever
// suspended, and only at points of its Scheduler:
//
//  * next_tick(): a transport operation waits for other ranks (a message, a
//    nonblocking collective); the owner resumes it at its next progress
//    tick, where the operation tests its requests and suspends again if
//    they are not done;
//  * slice(): local work has used up the time it may take in one go;
//  * to_driver() / to_any(): the pipeline moves between the driver's thread
//    and a helper thread (only when the runtime runs a helper).
//
// The owner is the runtime's progress engine (at MPI wrapper entries of the
// MPI thread, plus the analysis thread for local work) or, in unit tests, a
// simulator that resumes virtual ranks in random order.  Nothing here
// blocks a thread.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace onlinews::analysis {

template <class T>
class Task;

namespace detail {

// Resumes the awaiting coroutine when a task finishes (symmetric transfer:
// a long chain of completing tasks does not grow the stack).
struct FinalAwaiter {
  bool await_ready() const noexcept { return false; }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
    auto next = h.promise().continuation;
    return next ? next : std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  std::exception_ptr error;
  std::suspend_always initial_suspend() const noexcept { return {}; }
  FinalAwaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

}  // namespace detail

// A lazily started coroutine: it runs when awaited (or started with
// start()), and resumes its awaiter when it returns.
template <class T = void>
class Task {
 public:
  struct promise_type : detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    template <class U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
  };

  Task() = default;  // empty: done()
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) noexcept {
    h_.promise().continuation = awaiter;
    return h_;
  }
  T await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }

  // For the owner of a top-level task: runs it until its first suspension.
  void start() { h_.resume(); }
  bool done() const { return !h_ || h_.done(); }
  // After done(): the value (rethrows the task's exception).
  T result() { return await_resume(); }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {}
  void destroy() {
    if (h_) h_.destroy();
    h_ = {};
  }
  std::coroutine_handle<promise_type> h_;
};

template <>
class Task<void> {
 public:
  struct promise_type : detail::PromiseBase {
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_void() noexcept {}
  };

  Task() = default;  // empty: done()
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) noexcept {
    h_.promise().continuation = awaiter;
    return h_;
  }
  void await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }

  void start() { h_.resume(); }
  bool done() const { return !h_ || h_.done(); }
  void result() { await_resume(); }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) {}
  void destroy() {
    if (h_) h_.destroy();
    h_ = {};
  }
  std::coroutine_handle<promise_type> h_;
};

// Where a suspended pipeline may be resumed (Scheduler::where()).
enum class Where : int {
  Running = 0,  // not suspended (running, or not started)
  Driver = 1,   // by the driver only: it needs the driver's thread (MPI calls, the runtime's state)
  Any = 2,      // by the driver or its helper thread: local work
  Finished = 3  // never again (finish())
};

// The suspension points of an analysis pipeline (see the file comment) and
// the hand-over between two threads.  Without a helper (unit tests,
// ONLINEWS_ANALYSIS_THREAD=0) the driver resumes everything and to_driver()
// and to_any() never suspend.  With a helper, the pipeline says which of
// its sections need the driver's thread (to_driver(): transport operations,
// the runtime's buffers and the file) and which are local work any thread
// may run (to_any()); a suspension publishes the handle with the threads
// that may take it, and the one that claims it (try_resume) runs it alone.
class Scheduler {
 public:
  using clock = std::chrono::steady_clock;

  // Suspends until the driver's next tick (a transport operation waits for
  // other ranks).
  auto next_tick() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, Where::Driver, true); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }
  // Suspends if this slice of local work has used its time.
  auto slice() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() const noexcept { return !s.over_budget(); }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, s.affinity_, false); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }
  // Continues on the driver's thread; yields where the pipeline was before
  // (for back_to()).
  auto to_driver() {
    struct Awaiter {
      Scheduler& s;
      Where before = Where::Driver;
      bool await_ready() noexcept {
        before = s.affinity_;
        s.affinity_ = Where::Driver;
        return !s.split_ || !t_helper;
      }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, Where::Driver, false); }
      Where await_resume() const noexcept { return before; }
    };
    return Awaiter{*this};
  }
  // Local work follows: continues on the helper (at once if the driver may
  // not compute now).
  auto to_any() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() noexcept {
        s.affinity_ = Where::Any;
        return s.local_here();
      }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, Where::Any, false); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }
  // Back to where to_driver() found the pipeline.
  auto back_to(Where w) {
    struct Awaiter {
      Scheduler& s;
      Where w;
      bool await_ready() noexcept {
        if (w != Where::Any) return true;
        s.affinity_ = Where::Any;
        return s.local_here();
      }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, Where::Any, false); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this, w};
  }
  // The pipeline's last suspension: its frame may be destroyed from then on.
  auto finish() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.publish(h, Where::Finished, false); }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }

  // --- Driver and helper side ---
  // Before the pipeline starts: a helper thread takes the local work.
  void enable_helper(bool on) { split_ = on; }
  bool split() const { return split_; }
  // Called once by the helper thread.
  static void mark_helper_thread() { t_helper = true; }
  Where where() const { return static_cast<Where>(state_.load(std::memory_order_acquire)); }
  // True if a suspended pipeline waits for a resumption.
  bool waiting() const {
    const Where w = where();
    return w == Where::Driver || w == Where::Any;
  }
  // After where() == Driver: it waits for other ranks (next_tick), not only
  // for time (slice) or the driver's thread.
  bool waiting_for_remote() const { return remote_; }
  // Claims and resumes the pipeline if this thread may: the helper takes
  // Any, the driver Driver and (with `driver_computes`, e.g. when its
  // buffers fill up) Any.  `budget` for local work (0: no limit).  Without
  // `driver_computes` the driver still runs local work for the first
  // `grace` of the resumption: a short computation between two transport
  // operations costs less there than two hand-overs.  False if it was not
  // this thread's to resume.
  bool try_resume(bool helper, bool driver_computes, std::chrono::nanoseconds budget,
                  std::chrono::nanoseconds grace = std::chrono::nanoseconds(0)) {
    int s = state_.load(std::memory_order_acquire);
    const bool mine = helper ? s == static_cast<int>(Where::Any)
                             : (s == static_cast<int>(Where::Driver) || (s == static_cast<int>(Where::Any) && driver_computes));
    if (!mine || !state_.compare_exchange_strong(s, static_cast<int>(Where::Running), std::memory_order_acq_rel)) {
      return false;
    }
    auto h = std::exchange(waiting_, {});
    driver_computes_ = !helper && driver_computes;
    grace_ = helper || driver_computes ? std::chrono::nanoseconds(0) : grace;
    budget_ = budget;
    const clock::time_point t0 = clock::now();
    slice_start_ = t0;
    h.resume();
    const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count();
    busy_ns_.fetch_add(ns, std::memory_order_relaxed);
    if (helper) helper_ns_.fetch_add(ns, std::memory_order_relaxed);
    return true;
  }
  // Single-threaded drivers: resumes the pipeline with `budget`.
  void resume(std::chrono::nanoseconds budget = std::chrono::nanoseconds(0)) { try_resume(false, true, budget); }
  // Time spent in resumed slices (local work and the tests of requests), on
  // either thread.
  double busy_seconds() const { return 1e-9 * static_cast<double>(busy_ns_.load(std::memory_order_relaxed)); }
  // The part of it the helper ran.
  double helper_seconds() const { return 1e-9 * static_cast<double>(helper_ns_.load(std::memory_order_relaxed)); }
  // For the thread that starts the pipeline (Task::start()).
  void set_budget(std::chrono::nanoseconds budget) {
    budget_ = budget;
    slice_start_ = clock::now();
  }
  // The helper sleeps until the pipeline may be its to run: wait_signal(s)
  // returns once signal() has moved on from s.
  std::uint32_t signal() const { return signal_.load(std::memory_order_acquire); }
  void wait_signal(std::uint32_t seen) const { signal_.wait(seen, std::memory_order_acquire); }
  void wake() {
    signal_.fetch_add(1, std::memory_order_acq_rel);
    signal_.notify_all();
  }

 private:
  // The suspending thread's last touch of the pipeline: from the store on,
  // another thread may claim and resume it.
  void publish(std::coroutine_handle<> h, Where w, bool remote) noexcept {
    waiting_ = h;
    remote_ = remote;
    const bool wake_helper = split_ && w == Where::Any;
    state_.store(static_cast<int>(w), std::memory_order_release);
    if (wake_helper) wake();
  }
  bool on_driver_by_grace() const { return split_ && !t_helper && !driver_computes_; }
  bool over_budget() const {
    if (affinity_ == Where::Any && on_driver_by_grace()) return clock::now() - slice_start_ > grace_;
    return budget_.count() > 0 && clock::now() - slice_start_ > budget_;
  }
  // May local work run on this thread now?
  bool local_here() const {
    return !split_ || t_helper || driver_computes_ || (grace_.count() > 0 && clock::now() - slice_start_ < grace_);
  }

  static inline thread_local bool t_helper = false;
  bool split_ = false;
  // The running pipeline's (touched only by the thread that runs it):
  Where affinity_ = Where::Driver;  // section: Driver or Any
  bool driver_computes_ = true;
  std::chrono::nanoseconds budget_{0};
  std::chrono::nanoseconds grace_{0};
  clock::time_point slice_start_{};
  // Published with state_ (release), read after claiming it (acquire):
  std::coroutine_handle<> waiting_;
  bool remote_ = false;
  std::atomic<int> state_{static_cast<int>(Where::Running)};
  std::atomic<std::int64_t> busy_ns_{0}, helper_ns_{0};
  std::atomic<std::uint32_t> signal_{0};
};

}  // namespace onlinews::analysis
