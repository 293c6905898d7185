// MPI_Init / MPI_Init_thread and MPI_Finalize: set-up and tear-down of the
// analyzer.  Init and Finalize are recorded as pseudo-collectives on
// MPI_COMM_WORLD; the final epoch runs inside MPI_Finalize, before the MPI
// library shuts down.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "fortran.hpp"
#include "hooks_common.hpp"
#include "inline_analysis/resident.hpp"
#include "io/h5output.hpp"
#if ONLINEWS_HAVE_OMPT
#include "ompt/ompt.hpp"
#endif
#include "mpi_transport.hpp"
#include "patient.hpp"
#include "progress.hpp"
#include "regions.hpp"
#include "sampling.hpp"
#include "shared_guard.hpp"

extern char** environ;

namespace onlinews::rt {

void set_state(State* s);
void mark_mpi_thread();
std::string read_eager_limits(analysis::Definitions& defs, int thread_level);

namespace {

State* g_pending = nullptr;  // between pre_init and post_init
std::uint64_t g_init_ns = 0;

std::string executable_name() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "app";
  buf[n] = '\0';
  const char* base = std::strrchr(buf, '/');
  return base ? base + 1 : buf;
}

std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::replace(all.begin(), all.end(), '\0', ' ');
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

std::string iso_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string onlinews_environment() {
  std::vector<std::string> v;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "ONLINEWS_", 9) == 0) v.emplace_back(*e);
  }
  std::sort(v.begin(), v.end());
  std::string s;
  for (const auto& x : v) s += x + '\n';
  return s;
}

// Every rank uses rank 0's ONLINEWS_* settings, so that epochs and analyses
// agree (a per-rank difference would otherwise hang the job).
Config agree_config(State& s) {
  std::string env = onlinews_environment();
  const std::string mine = env;
  int n = static_cast<int>(env.size());
  PMPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  env.resize(static_cast<std::size_t>(n));
  PMPI_Bcast(env.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  int differs = mine != env ? 1 : 0, any = 0;
  PMPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::map<std::string, std::string> vars;
  std::vector<std::string> entries;
  std::istringstream is(env);
  for (std::string line; std::getline(is, line);) {
    entries.push_back(line);
    const auto eq = line.find('=');
    vars[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  Config cfg = parse_config(
      [&](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      entries, s.warnings);
  if (any) s.warnings.push_back("ONLINEWS_* settings differ between ranks; rank 0's settings are used everywhere");
  return cfg;
}

void host_map(State& s) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  const std::uint64_t h = std::hash<std::string>{}(name);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(s.size));
  PMPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, s.tool_world);
  std::map<std::uint64_t, int> ids;
  s.defs.host_of_rank.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    s.defs.host_of_rank[r] = ids.emplace(all[r], static_cast<int>(ids.size())).first->second;
  }
}

// Returns false if the analyzer stays off for this run.
bool start(State& s, const Call& c, std::uint64_t t_pmpi_done) {
  s.cfg = agree_config(s);
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &s.size);
  if (!s.cfg.enable) return false;
  s.thread_level = c.provided != nullptr ? *c.provided : MPI_THREAD_SINGLE;
  g_threads_share_mpi.store(s.thread_level == MPI_THREAD_MULTIPLE, std::memory_order_relaxed);
  g_callsites.store(s.cfg.callsites, std::memory_order_relaxed);
  s.exe = executable_name();
  s.command = command_line();
  s.start_time = iso_now();
  {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    PMPI_Get_library_version(lib, &len);
    s.mpi_library = std::string(lib, static_cast<std::size_t>(std::max(len, 0)));
    while (!s.mpi_library.empty() && (s.mpi_library.back() == '\n' || s.mpi_library.back() == '\0')) {
      s.mpi_library.pop_back();
    }
  }
  PMPI_Comm_dup(MPI_COMM_WORLD, &s.tool_world);
  init_regions(s.exe, s.cfg.filter);
  publish_regions(s.defs.regions);
  s.defs.world_rank = s.rank;
  s.defs.threads_share_mpi = s.thread_level == MPI_THREAD_MULTIPLE;
  s.defs.world_size = s.size;
  s.comms.init(s.rank, s.size);
  host_map(s);
  // MPI_T start-up costs ~0.2 s in Open MPI: only pay it when asked to.
  std::string eager = s.cfg.eager_limit == "auto" ? read_eager_limits(s.defs, s.thread_level) : "ONLINEWS_EAGER_LIMIT";
  if (s.cfg.eager_limit != "auto") {
    std::uint64_t limit = 0;
    if (parse_size_text(s.cfg.eager_limit, limit)) {
      s.defs.eager_limit_local = s.defs.eager_limit_remote = limit;
    } else {
      s.warnings.push_back("ONLINEWS_EAGER_LIMIT='" + s.cfg.eager_limit +
                           "' is not valid (expected auto or a size such as 4096 or 64K); using auto");
      eager = read_eager_limits(s.defs, s.thread_level);
    }
  }
  s.eager_limits = eager;
  s.pvars.start(s.cfg.mpi_t_pvars, s.thread_level, s.rank, s.warnings);
  // Rank 0 writes the file: it loads HDF5 (io/module.hpp) before the
  // synchronizing calls below, so that the others wait for it here, inside
  // MPI_Init, as they did when libhdf5 came with libonlinews at exec --
  // not in their first message from rank 0 after MPI_Init (a delay charged
  // to onlinews' set-up: 0.08-0.12 s in mpi.requested_cuts on 4 loaded
  // ranks).  A failure is reported by open_output.
  if (s.rank == 0) {
    std::string ignored;
    io::load_module(ignored);
  }
  s.clock_sync.init(s.tool_world, s.rank, s.defs.host_of_rank, g_init_ns, s.cfg.test_clock_skew);
  const std::uint64_t init_ns = s.clock_sync.to_global(g_init_ns);
  std::uint64_t start_ns = init_ns;
  PMPI_Allreduce(&init_ns, &start_ns, 1, MPI_UINT64_T, MPI_MIN, s.tool_world);
  s.start_ns = start_ns;
  s.last_epoch_ns = monotonic_ns();

  for (const auto& name : analysis::unknown_selections(s.cfg.analyses)) {
    s.warnings.push_back("ONLINEWS_ANALYSES: unknown analysis '" + name + "' is ignored (valid: " +
                         analysis::known_selections() + ")");
  }
  // (Before the first buffer: every thread's ring is made after this.  The
  // huge page size is read from /sys here, once, not at a thread's first event.)
  analysis::huge_pages_wanted().store(s.cfg.huge_pages && analysis::huge_page_bytes() != 0, std::memory_order_relaxed);
  s.buffers.configure(std::max<std::uint64_t>(s.cfg.buffer / sizeof(Event), 2 * kLeaveReserve));
  if (fortran::entries_bypassed()) {
    s.warnings.push_back("Fortran MPI calls bypass onlinews: libonlinews comes after the MPI Fortran libraries in "
                         "the link order (link -lonlinews before them, or use LD_PRELOAD)");
  }
  if (const fortran::PatchReport& f = fortran::mpich_fortran_patch(); f.failed > 0) {
    s.warnings.push_back(std::to_string(f.failed) + " of MPICH's mpi_f08 entry points could not be redirected to "
                         "onlinews (a read-only GOT): those Fortran calls pass unseen");
  }
  if (s.cfg.sampling > 0) {
    std::string why;
    if (!init_sampling(static_cast<int>(s.cfg.sampling), why)) {
      s.warnings.push_back("ONLINEWS_SAMPLING=" + std::to_string(s.cfg.sampling) + ": sampling is off: " + why);
    }
  }
  s.analysis_defs = s.defs;
  s.analyzer = std::make_unique<analysis::Analyzer>(s.analysis_defs, analysis_options(s.cfg));
  s.transport = std::make_unique<MpiTransport>(s.tool_world, s.comms);
  s.pipeline = std::make_unique<Pipeline>(s);
  const int my_host = s.defs.host_of_rank[static_cast<std::size_t>(s.rank)];
  const ThreadChoice helper = choose_analysis_thread(
      s.cfg.analysis_thread, static_cast<int>(std::count(s.defs.host_of_rank.begin(), s.defs.host_of_rank.end(), my_host)));
  if (helper.bad) {
    s.warnings.push_back("ONLINEWS_ANALYSIS_THREAD='" + s.cfg.analysis_thread +
                         "' is not auto, 0 or 1; using the default (auto)");
  }
  if (s.cfg.verbose >= 3 || (s.cfg.verbose >= 2 && s.rank == 0)) {
    std::fprintf(stderr, "onlinews[%d]: analysis thread %s (%s)\n", s.rank, helper.on ? "on" : "off",
                 helper.why.c_str());
  }
  if (helper.on) {
    s.analysis_thread = std::make_unique<AnalysisThread>();
    if (!s.analysis_thread->start(s.transport->scheduler())) {
      s.analysis_thread.reset();
      s.warnings.push_back("could not start the analysis thread; the analysis runs on the MPI thread");
    }
  }
  s.cuts = std::make_unique<CutProtocol>(s);
  s.cuts->init();

  mark_mpi_thread();
  set_state(&s);
  open_output(s);
  for (const auto& w : s.warnings) log_warning(w);
  if (s.thread_level == MPI_THREAD_MULTIPLE) {
    log_warning(std::string("MPI_THREAD_MULTIPLE") +
                ": point-to-point calls of every thread are analyzed (messages whose order concurrent calls of "
                "several threads leave open are counted, not analyzed); collective, RMA and communicator calls "
                "of threads other than the one that initialized MPI are recorded as time only, and the "
                "collectives on communicators they use are not analyzed (counted in the summary and the file)");
  }
  if (s.cfg.verbose >= 2 && s.rank == 0) {
    log_info("recording " + std::to_string(s.size) + " ranks; buffer " + std::to_string(s.cfg.buffer) +
             " bytes per thread; clock " + s.clock_name + "; eager limits: " + eager);
    if (const fortran::PatchReport& f = fortran::mpich_fortran_patch(); f.objects > 0) {
      log_info("MPICH's mpi_f08 binding: " + std::to_string(f.redirected) + " PMPI calls redirected to the wrappers");
    }
    char line[160];
    std::snprintf(line, sizeof line, "clock domains: %d (largest offset %.6f s, round trip %.1f us)%s",
                  s.clock_sync.domains(), s.clock_sync.max_offset_seconds(), 1e6 * s.clock_sync.max_rtt_seconds(),
                  s.clock_sync.skew().on ? " [ONLINEWS_TEST_CLOCK_SKEW]" : "");
    log_info(line);
  }
  // The main thread's first window: root region, then MPI_Init as a
  // pseudo-collective on WORLD, then onlinews' own set-up as overhead.
  ThreadBuffer* b = s.buffers.get_or_create();
  t_buffer = b;
  if (b != nullptr) {
    b->push(Event::enter(s.t_init_raw, root_region()));
    b->push(call_enter_event(c, s.t_init_raw));
    b->push(Event::collective_end(t_pmpi_done, static_cast<std::uint16_t>(s.comms.lookup(MPI_COMM_WORLD)), -1, 0, 0));
    b->push(Event::leave(t_pmpi_done));
    b->push(Event::enter(t_pmpi_done, tool_region_setup()));
    b->push(Event::leave(raw_now()));
  }
  init_progress();
  // (After onlinews' own set-up: its samples would be computation.)
  if (b != nullptr) start_thread_sampling(b->thread_index());
  return true;
}

}  // namespace

namespace hooks {

void pre_init(Call& c) {
  if (state() != nullptr || g_pending != nullptr) return;
  g_pending = new (std::nothrow) State;
  if (g_pending == nullptr) return;
  try {  // (files read, strings: nothing may throw into MPI_Init's caller)
    std::string clock_warning;
    g_pending->clock_name = init_clock(g_pending->clock, clock_warning);
    if (!clock_warning.empty()) g_pending->warnings.push_back(clock_warning);
  } catch (...) {
    delete g_pending;
    g_pending = nullptr;  // (the analyzer stays off: post_init finds no state)
    return;
  }
  g_pending->t_init_raw = raw_now();
  g_init_ns = monotonic_ns();
  c.t_enter = g_pending->t_init_raw;
}

void post_init(Call& c, int rc) {
  State* s = g_pending;
  g_pending = nullptr;
  if (s == nullptr) return;
  const std::uint64_t t_done = raw_now();
  if (rc != MPI_SUCCESS) {
    delete s;
    return;
  }
  ++t_in_tool;
  bool on = false;
  try {
    on = start(*s, c, t_done);
  } catch (...) {
    on = false;
    log_warning("set-up failed; the analyzer is off for this run", false);
  }
  --t_in_tool;
  if (on) {
    g_recording.store(true, std::memory_order_release);
  } else if (state() != s) {
    delete s;  // never published: no thread can hold a pointer into it
  }
}

void pre_finalize(Call& c) {
  State* s = state();
  if (s == nullptr || !g_recording.load()) return;
  if (s->cfg.verbose >= 2) {
    std::fprintf(stderr, "onlinews[%d]: %llu blocking calls ran analysis while they waited\n", s->rank,
                 static_cast<unsigned long long>(patient::waited_calls()));
  }
#if ONLINEWS_HAVE_OMPT
  if (s->rank == 0) ompt::report_support(s->cfg.verbose);  // (before the summary)
#endif
  stop_sampling();  // (what follows is MPI_Finalize and the tool's own work)
  const std::uint64_t t = raw_now();
  record(call_enter_event(c, t));
  {
    // Finalize synchronizes all ranks.  While this rank waits for the others
    // the tool goes on with its own work: rank 0 may have to announce cuts
    // for ranks that still run.  (WORLD's decision communicator: no epoch
    // issues collectives on it, and every cut decision is behind us.)
    ToolScope tool;
    MPI_Request barrier = MPI_REQUEST_NULL;
    PMPI_Ibarrier(s->comms.rec(s->comms.lookup(MPI_COMM_WORLD)).decide, &barrier);
    for (int done = 0;;) {
      PMPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) {
        // (Test knob: a cut announced after every other rank may have left
        // the barrier, which rank 0's poll above can do by chance.)
        if (s->cfg.test_late_cut) s->cuts->announce_now();
        break;
      }
      s->cuts->poll();
      if (s->pipeline->advance(std::chrono::microseconds(200), true) == Pipeline::Wait::Helper) {
        std::this_thread::yield();
      }
    }
  }
  const std::uint64_t t2 = raw_now();
  record(Event::collective_end(t2, static_cast<std::uint16_t>(s->comms.lookup(MPI_COMM_WORLD)), -1, 0, 0));
  record_leave(t2);  // MPI_Finalize
  record_leave(t2);  // root region
  ++t_in_tool;
  t_progress_gate = UINT64_MAX;
  try {
    final_epoch(t, t2);
    if (s->analysis_thread) s->analysis_thread->stop();
    if (const std::uint64_t n = s->clock.rate_changes(); n > 0) {
      log_warning("the time stamp counter and CLOCK_MONOTONIC disagreed on the rate " + std::to_string(n) +
                      " time(s) during the run (the counter jumped or changed its rate: a virtual machine restored "
                      "or migrated?; or NTP slewed the clock): times within the epochs around them are "
                      "approximate; ONLINEWS_CLOCK=monotonic avoids this",
                  false);
    }
    s->finalize_leave_ns = global_ns(*s, t2);
    g_recording.store(false);
    finish_output(*s);
    write_reference(*s);
  } catch (...) {
    log_warning("the final analysis failed; results may be incomplete", false);
  }
  g_recording.store(false);
  s->pvars.stop();  // (MPI_T before MPI)
  mpi_t_close();
  s->transport.reset();
  s->comms.release_all();
  if (s->tool_world != MPI_COMM_NULL) PMPI_Comm_free(&s->tool_world);
  --t_in_tool;
  // The state stays allocated: threads other than this one may still hold
  // their buffer pointers (they stop recording now that g_recording is off).
}

void post_finalize(Call&, int) {}

}  // namespace hooks
}  // namespace onlinews::rt
