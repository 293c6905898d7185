// Coroutines of the asynchronous replay (DESIGN.md §4).  An epoch's analysis
// is one chain of Task coroutines (run_epoch awaits the matching, which
// awaits a transport operation, ...).  Only its innermost frame is ever
// suspended, and only at one of two points of its Scheduler:
//
//  * next_tick(): a transport operation waits for other ranks (a message, a
//    nonblocking collective); the owner resumes it at its next progress
//    tick, where the operation tests its requests and suspends again if
//    they are not done;
//  * slice(): local work has used up the time it may take in one go.
//
// The owner is the runtime's progress engine (at MPI wrapper entries of the
// MPI thread) or, in unit tests, a simulator that resumes virtual ranks in
// random order.  Nothing here blocks a thread.
#pragma once
#include <chrono>
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

// The one suspension point of an analysis pipeline (see the file comment).
// Owned by whoever drives the pipeline; not thread-safe (one driver at a
// time, which may be any thread that holds the driver's lock).
class Scheduler {
 public:
  using clock = std::chrono::steady_clock;

  // Suspends until the driver's next tick.
  auto next_tick() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.waiting_ = h; s.remote_ = true; }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }
  // Suspends if this slice of local work has used its time.
  auto slice() {
    struct Awaiter {
      Scheduler& s;
      bool await_ready() const noexcept { return !s.over_budget(); }
      void await_suspend(std::coroutine_handle<> h) noexcept { s.waiting_ = h; s.remote_ = false; }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }

  // Driver side.  True if a suspended pipeline waits here.
  bool waiting() const { return static_cast<bool>(waiting_); }
  // True if it waits for other ranks (next_tick), false if it only ran out
  // of time (slice): the driver may then give it more time at once.
  bool waiting_for_remote() const { return remote_; }
  // Resumes the pipeline with `budget` for its local work (0: no limit).
  void resume(std::chrono::nanoseconds budget = std::chrono::nanoseconds(0)) {
    auto h = std::exchange(waiting_, {});
    budget_ = budget;
    slice_start_ = clock::now();
    h.resume();
    busy_ += clock::now() - slice_start_;
  }
  // Time spent in resumed slices (local work and the tests of requests).
  double busy_seconds() const { return std::chrono::duration<double>(busy_).count(); }
  void set_budget(std::chrono::nanoseconds budget) {
    budget_ = budget;
    slice_start_ = clock::now();
  }

 private:
  bool over_budget() const { return budget_.count() > 0 && clock::now() - slice_start_ > budget_; }
  std::coroutine_handle<> waiting_;
  bool remote_ = false;
  std::chrono::nanoseconds budget_{0};
  clock::time_point slice_start_{};
  clock::duration busy_{0};
};

}  // namespace onlinews::analysis
