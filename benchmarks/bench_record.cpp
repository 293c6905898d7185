// Micro-benchmarks of the recording hot path, without MPI (DESIGN quality bar:
// "per recorded event <= 25 ns on this machine").
//
//   BM_Push/...            ThreadBuffer::push of one event (buffer never full:
//                          it is drained, untimed, before it reaches the
//                          Leave reserve).  Arg = capacity in events.
//   BM_PushFirstPass/...   push into a freshly allocated buffer: the first pass
//                          over its memory pays one page fault per 2 MiB huge
//                          page (huge:1, the default) or per 4 KiB (huge:0,
//                          128 events), as every rank does after MPI_Init.
//   BM_PushDrop/...        push into a full buffer (the drop path).
//   BM_RawNow_TSC          raw_now() with g_use_tsc = true (one rdtsc).
//   BM_RawNow_NoTSC        raw_now() with g_use_tsc = false (clock_gettime).
//   BM_ClockGettime/...    clock_gettime directly, for comparison.
//   BM_RecordInline/...    timestamp + push, everything inlined into the
//                          benchmark (the lower bound of "record one event").
//   BM_Probe*Call          the same through onlinews_bench_probe, a shared
//                          library laid out like libonlinews.so (PLT call into
//                          the hook, TLS wrappers, Call record; see
//                          probe/probe.h): the realistic cost per event.
//
// Every benchmark reports ns_per_event; the run ends with a table of the
// medians over the repetitions against the 25 ns budget.  By default each
// benchmark is repeated 5 times (the machine is shared and noisy); pass
// --benchmark_repetitions=N to change that.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "buffer.hpp"
#include "clock.hpp"
#include "event.hpp"
#include "probe/probe.h"

// runtime/buffer.cpp is compiled into this benchmark; the clock flag is
// defined here (in the library it lives in runtime.cpp).  The probe library
// has its own private copies of both.
namespace onlinews::rt {
bool g_use_tsc = false;
}

namespace {

using onlinews::Event;
using onlinews::EventKind;
using onlinews::rt::kLeaveReserve;
using onlinews::rt::ThreadBuffer;

constexpr double kBudgetNs = 25.0;

void set_ns_per_event(benchmark::State& state, double events_per_iteration) {
  state.counters["ns_per_event"] =
      benchmark::Counter(events_per_iteration, benchmark::Counter::kIsIterationInvariantRate |
                                                   benchmark::Counter::kInvert);
}

// A buffer plus an untimed drain before it would start dropping.
class DrainedBuffer {
 public:
  explicit DrainedBuffer(std::size_t capacity)
      : buf_(capacity, 0), room_(capacity - kLeaveReserve - 8) {
    sink_.reserve(capacity);
  }
  ThreadBuffer& buf() { return buf_; }
  // Call once per pushed event (`n` events per call).
  void account(benchmark::State& state, std::size_t n = 1) {
    left_ -= static_cast<std::ptrdiff_t>(n);
    if (left_ < static_cast<std::ptrdiff_t>(n)) {
      state.PauseTiming();
      drain();
      state.ResumeTiming();
    }
  }
  void drain() {
    sink_.clear();
    buf_.drain(sink_);
    left_ = static_cast<std::ptrdiff_t>(room_);
  }
  std::uint64_t dropped() { return buf_.take_dropped(); }

 private:
  ThreadBuffer buf_;
  std::size_t room_;
  std::ptrdiff_t left_ = static_cast<std::ptrdiff_t>(room_);
  std::vector<Event> sink_;
};

void check_no_drops(benchmark::State& state, std::uint64_t dropped) {
  if (dropped != 0) state.SkipWithError(("unexpected drops: " + std::to_string(dropped)).c_str());
}

// ---- push -------------------------------------------------------------------

// Arg 0: capacity in events.  Arg 1: kind (0 Enter, 1 Leave, 2 Send).
void BM_Push(benchmark::State& state) {
  auto db = std::make_unique<DrainedBuffer>(static_cast<std::size_t>(state.range(0)));
  const int kind = static_cast<int>(state.range(1));
  Event e = kind == 0   ? Event::enter(1, 7)
            : kind == 1 ? Event::leave(1)
                        : Event::message(EventKind::Send, 1, 0, 3, 42, 8);
  std::uint64_t t = 1;
  for (auto _ : state) {
    e.time = ++t;
    db->buf().push(e);
    db->account(state);
  }
  check_no_drops(state, db->dropped());
  set_ns_per_event(state, 1);
  state.SetLabel(event_kind_name(e.kind));
}
BENCHMARK(BM_Push)
    ->ArgNames({"cap", "kind"})
    ->Args({1 << 16, 0})      // 2 MiB: fits the caches
    ->Args({1 << 19, 0})      // 16 MiB: the default ONLINEWS_BUFFER
    ->Args({1 << 19, 1})
    ->Args({1 << 19, 2});

// The sequence an MPI_Send wrapper pushes: Enter, Send, Leave.
void BM_PushCallTriple(benchmark::State& state) {
  auto db = std::make_unique<DrainedBuffer>(static_cast<std::size_t>(state.range(0)));
  std::uint64_t t = 1;
  for (auto _ : state) {
    db->buf().push(Event::enter(++t, 3));
    db->buf().push(Event::message(EventKind::Send, t, 0, 1, 42, 8));
    db->buf().push(Event::leave(++t));
    db->account(state, 3);
  }
  check_no_drops(state, db->dropped());
  set_ns_per_event(state, 3);
}
BENCHMARK(BM_PushCallTriple)->ArgName("cap")->Arg(1 << 19);

// First pass over a new buffer: untimed, the buffer is freed and allocated
// again (a fresh mapping of its own) whenever it would start dropping, so
// every timed push writes memory never touched before.  Arg huge: 1 = in
// transparent huge pages where the kernel has them (ONLINEWS_HUGE_PAGES'
// default: one fault per 2 MiB), 0 = no hint (4 KiB pages, one fault per
// 128 events, unless the kernel's THP mode is `always`).
void BM_PushFirstPass(benchmark::State& state) {
  const std::size_t cap = static_cast<std::size_t>(state.range(0));
  const bool was = onlinews::analysis::huge_pages_wanted().exchange(state.range(1) != 0);
  const std::ptrdiff_t room = static_cast<std::ptrdiff_t>(cap - kLeaveReserve - 8);
  std::unique_ptr<ThreadBuffer> buf;
  std::ptrdiff_t left = 0;
  std::uint64_t t = 1, dropped = 0;
  for (auto _ : state) {
    if (left == 0) {
      state.PauseTiming();
      if (buf) dropped += buf->take_dropped();
      buf.reset();
      buf = std::make_unique<ThreadBuffer>(cap, 0);
      left = room;
      state.ResumeTiming();
    }
    buf->push(Event::message(EventKind::Send, ++t, 0, 1, 42, 8));
    --left;
  }
  if (buf) dropped += buf->take_dropped();
  onlinews::analysis::huge_pages_wanted().store(was);
  check_no_drops(state, dropped);
  set_ns_per_event(state, 1);
}
BENCHMARK(BM_PushFirstPass)->ArgNames({"cap", "huge"})->Args({1 << 19, 1})->Args({1 << 19, 0});

// Drop path: the buffer is full (fewer than kLeaveReserve free slots).
// Arg: 0 = Enter/Leave pairs (the Enter is dropped, so its Leave is too),
//      1 = message events only.
void BM_PushDrop(benchmark::State& state) {
  const std::size_t cap = 1 << 16;
  ThreadBuffer buf(cap, 0);
  for (std::size_t i = 0; i < cap; ++i) buf.push(Event::message(EventKind::Send, i, 0, 1, 1, 8));
  buf.take_dropped();
  const bool pairs = state.range(0) == 0;
  std::uint64_t t = 1;
  for (auto _ : state) {
    if (pairs) {
      buf.push(Event::enter(++t, 3));
      buf.push(Event::leave(++t));
    } else {
      buf.push(Event::message(EventKind::Send, ++t, 0, 1, 42, 8));
    }
  }
  const std::uint64_t expect = state.iterations() * (pairs ? 2u : 1u);
  if (buf.take_dropped() != expect) state.SkipWithError("not every event was dropped");
  set_ns_per_event(state, pairs ? 2 : 1);
  state.SetLabel(pairs ? "Enter+Leave" : "Send");
}
BENCHMARK(BM_PushDrop)->ArgName("kind")->Arg(0)->Arg(1);

// ---- clocks -----------------------------------------------------------------

void BM_RawNow_TSC(benchmark::State& state) {
#if ONLINEWS_HAVE_TSC
  onlinews::rt::g_use_tsc = true;
  for (auto _ : state) benchmark::DoNotOptimize(onlinews::rt::raw_now());
  onlinews::rt::g_use_tsc = false;
  set_ns_per_event(state, 1);
#else
  state.SkipWithError("no TSC on this architecture");
  for (auto _ : state) {
  }
#endif
}
BENCHMARK(BM_RawNow_TSC);

void BM_RawNow_NoTSC(benchmark::State& state) {
  onlinews::rt::g_use_tsc = false;
  for (auto _ : state) benchmark::DoNotOptimize(onlinews::rt::raw_now());
  set_ns_per_event(state, 1);
}
BENCHMARK(BM_RawNow_NoTSC);

void BM_ClockGettime(benchmark::State& state) {
  const clockid_t id = static_cast<clockid_t>(state.range(0));
  timespec ts;
  for (auto _ : state) {
    clock_gettime(id, &ts);
    benchmark::DoNotOptimize(ts);
  }
  set_ns_per_event(state, 1);
  state.SetLabel(id == CLOCK_MONOTONIC        ? "CLOCK_MONOTONIC"
                 : id == CLOCK_MONOTONIC_RAW  ? "CLOCK_MONOTONIC_RAW"
                 : id == CLOCK_MONOTONIC_COARSE ? "CLOCK_MONOTONIC_COARSE"
                                                : "?");
}
BENCHMARK(BM_ClockGettime)
    ->ArgName("clock")
    ->Arg(CLOCK_MONOTONIC)
    ->Arg(CLOCK_MONOTONIC_RAW)
    ->Arg(CLOCK_MONOTONIC_COARSE);

// ---- record one event -------------------------------------------------------

thread_local ThreadBuffer* t_bench_buffer = nullptr;

// raw_now() + push, all inlined (the lower bound).  Arg: 1 = TSC, 0 = clock_gettime.
void BM_RecordInline(benchmark::State& state) {
  onlinews::rt::g_use_tsc = state.range(0) != 0;
  auto db = std::make_unique<DrainedBuffer>(1 << 19);
  t_bench_buffer = &db->buf();
  for (auto _ : state) {
    ThreadBuffer* b = t_bench_buffer;
    if (b != nullptr) b->push(Event::message(EventKind::Send, onlinews::rt::raw_now(), 0, 1, 42, 8));
    db->account(state);
  }
  t_bench_buffer = nullptr;
  onlinews::rt::g_use_tsc = false;
  check_no_drops(state, db->dropped());
  set_ns_per_event(state, 1);
  state.SetLabel(state.range(0) ? "tsc" : "clock_gettime");
}
BENCHMARK(BM_RecordInline)->ArgName("tsc")->Arg(1)->Arg(0);

// Through the probe library (libonlinews.so's layout).  Drained like the
// others; the probe's buffer is the default size (512 Ki events).
constexpr std::size_t kProbeCapacity = 1 << 19;

template <typename F>
void probe_loop(benchmark::State& state, std::size_t events_per_call, F&& call) {
  onlinews_probe_setup(kProbeCapacity, static_cast<int>(state.range(0)));
  if (onlinews_probe_buffer() == nullptr) {
    state.SkipWithError("probe buffer could not be created");
    for (auto _ : state) {
    }
    return;
  }
  onlinews_probe_drain();
  onlinews_probe_take_dropped();
  const std::ptrdiff_t room = static_cast<std::ptrdiff_t>(kProbeCapacity - kLeaveReserve - 8);
  std::ptrdiff_t left = room;
  for (auto _ : state) {
    call();
    left -= static_cast<std::ptrdiff_t>(events_per_call);
    if (left < static_cast<std::ptrdiff_t>(events_per_call)) {
      state.PauseTiming();
      onlinews_probe_drain();
      left = room;
      state.ResumeTiming();
    }
  }
  check_no_drops(state, onlinews_probe_take_dropped());
  onlinews_probe_drain();
  set_ns_per_event(state, static_cast<double>(events_per_call));
  state.SetLabel(state.range(0) ? "tsc" : "clock_gettime");
}

void BM_ProbePlainCall(benchmark::State& state) {
  probe_loop(state, 2, [] { onlinews_probe_plain_call(); });
}
BENCHMARK(BM_ProbePlainCall)->ArgName("tsc")->Arg(1)->Arg(0);

void BM_ProbeSendCall(benchmark::State& state) {
  int tag = 0;
  probe_loop(state, 3, [&] { onlinews_probe_send_call(1, ++tag, 1); });
}
BENCHMARK(BM_ProbeSendCall)->ArgName("tsc")->Arg(1)->Arg(0);

// ---- summary ------------------------------------------------------------------

// Console output as usual, plus the medians of ns_per_event collected for a
// closing table against the budget.
class BudgetReporter : public benchmark::ConsoleReporter {
 public:
  explicit BudgetReporter(bool color)
      : ConsoleReporter(color ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      auto it = r.counters.find("ns_per_event");
      if (it == r.counters.end()) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "median") continue;
      if (!aggregate && r.repetitions > 1) continue;  // wait for the median
      const std::string name = r.run_name.str() + (r.report_label.empty() ? "" : " [" + r.report_label + "]");
      medians_[name] = it->second.value * 1e9;
      if (std::find(order_.begin(), order_.end(), name) == order_.end()) order_.push_back(name);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nns per event (median of the repetitions; budget %.0f ns per recorded event)\n", kBudgetNs);
    for (const std::string& n : order_) {
      const double v = medians_[n];
      const bool is_event = n.rfind("BM_Record", 0) == 0 || n.rfind("BM_Probe", 0) == 0;
      std::printf("  %-58s %8.2f ns%s\n", n.c_str(), v,
                  is_event ? (v <= kBudgetNs ? "   within budget" : "   OVER BUDGET") : "");
    }
    std::fflush(stdout);
  }

 private:
  std::map<std::string, double> medians_;
  std::vector<std::string> order_;
};

}  // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold: every large heap block is a fresh mapping (glibc
  // otherwise raises the threshold after the first free and recycles memory
  // that is already faulted in).  The rings are mappings of their own
  // anyway (inline_analysis/resident.hpp: map_fresh).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Default: 5 repetitions, aggregates only (the machine is noisy).
  std::vector<char*> args(argv, argv + argc);
  bool has_reps = false, has_aggr = false, other_format = false, color = isatty(1) != 0;
  for (int i = 1; i < argc; ++i) {
    other_format = other_format || (std::strncmp(argv[i], "--benchmark_format=", 19) == 0 &&
                                     std::strcmp(argv[i], "--benchmark_format=console") != 0);
    if (std::strncmp(argv[i], "--benchmark_color=", 18) == 0) {
      const char* v = argv[i] + 18;
      color = std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0 || std::strcmp(v, "1") == 0 ||
              (std::strcmp(v, "auto") == 0 && isatty(1));
    }
    has_reps = has_reps || std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
    has_aggr = has_aggr || std::strncmp(argv[i], "--benchmark_report_aggregates_only", 34) == 0 ||
               std::strncmp(argv[i], "--benchmark_display_aggregates_only", 35) == 0;
  }
  static char reps[] = "--benchmark_repetitions=5";
  static char aggr[] = "--benchmark_display_aggregates_only=true";
  if (!has_reps) args.push_back(reps);
  if (!has_aggr) args.push_back(aggr);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  if (other_format) {
    benchmark::RunSpecifiedBenchmarks();  // json/csv: no closing table
  } else {
    BudgetReporter reporter(color);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  }
  benchmark::Shutdown();
  return 0;
}
