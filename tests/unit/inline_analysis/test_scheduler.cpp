// The hand-over between the driver (the MPI thread) and the analysis thread
// (task.hpp): sections after to_driver() run only on the driver, sections
// after to_any() on the helper unless the driver may compute, and every
// resumption is claimed by exactly one thread.  Real threads, no MPI.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "inline_analysis/task.hpp"

using namespace onlinews::analysis;
using namespace std::chrono_literals;

namespace {

struct Trace {
  std::vector<std::thread::id> driver_sections, any_sections;
  int ticks = 0;
};

// Alternates sections like an epoch: transport operation (driver, waits a
// few ticks for "other ranks"), local work (any thread, sliced).
Task<> pipeline(Scheduler& s, Trace& t, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    const Where home = co_await s.to_driver();
    for (int k = 0; k < 2; ++k) co_await s.next_tick();
    t.driver_sections.push_back(std::this_thread::get_id());
    co_await s.back_to(home);
    co_await s.to_any();
    for (int k = 0; k < 3; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - t0 < 50us) {
      }
      t.any_sections.push_back(std::this_thread::get_id());
      co_await s.slice();
    }
  }
  co_await s.to_driver();
  co_await s.finish();
}

// The analysis thread's loop (runtime/analysis_thread.cpp).
void helper_loop(Scheduler& s, std::atomic<bool>& stop) {
  Scheduler::mark_helper_thread();
  while (!stop.load()) {
    const std::uint32_t seen = s.signal();
    if (s.try_resume(true, false, 20us)) continue;
    if (stop.load()) break;
    s.wait_signal(seen);
  }
}

}  // namespace

TEST_CASE("with a helper, local work runs on it and transport sections on the driver", "[scheduler]") {
  Scheduler s;
  s.enable_helper(true);
  std::atomic<bool> stop{false};
  std::thread helper([&] { helper_loop(s, stop); });
  Trace t;
  Task<> task = pipeline(s, t, 50);
  task.start();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (s.where() != Where::Finished && std::chrono::steady_clock::now() < deadline) {
    if (!s.try_resume(false, false, 10us)) std::this_thread::yield();
  }
  stop = true;
  s.wake();
  helper.join();
  REQUIRE(s.where() == Where::Finished);
  REQUIRE(t.driver_sections.size() == 50);
  REQUIRE(t.any_sections.size() == 150);
  const auto me = std::this_thread::get_id();
  for (const auto& id : t.driver_sections) CHECK(id == me);
  for (const auto& id : t.any_sections) CHECK(id != me);
}

TEST_CASE("a driver that may compute takes local work the helper has not claimed", "[scheduler]") {
  // No helper thread runs: with driver_computes the driver runs everything
  // (what the MPI thread does when its buffers fill up or at MPI_Finalize).
  Scheduler s;
  s.enable_helper(true);
  Trace t;
  Task<> task = pipeline(s, t, 10);
  task.start();
  for (int i = 0; i < 100000 && s.where() != Where::Finished; ++i) s.try_resume(false, true, 0ns);
  REQUIRE(s.where() == Where::Finished);
  CHECK(t.any_sections.size() == 30);
  for (const auto& id : t.any_sections) CHECK(id == std::this_thread::get_id());
}

TEST_CASE("without driver_computes the driver never claims local work, except within its grace", "[scheduler]") {
  Scheduler s;
  s.enable_helper(true);
  Trace t;
  Task<> task = pipeline(s, t, 1);
  task.start();
  // The driver runs the transport section; local work is then published for
  // the helper and stays there.
  for (int i = 0; i < 10; ++i) s.try_resume(false, false, 0ns);
  CHECK(t.driver_sections.size() == 1);
  CHECK(t.any_sections.empty());
  CHECK(s.where() == Where::Any);
  CHECK_FALSE(s.try_resume(false, false, 0ns));
  // A grace long enough for all of it: the driver finishes the work itself.
  Scheduler g;
  g.enable_helper(true);
  Trace u;
  Task<> task2 = pipeline(g, u, 1);
  task2.start();
  for (int i = 0; i < 10 && g.where() != Where::Finished; ++i) g.try_resume(false, false, 0ns, 10s);
  CHECK(g.where() == Where::Finished);
  CHECK(u.any_sections.size() == 3);
}
