// OMPT callbacks -> Enter/Leave of OpenMP construct regions in the calling
// thread's buffer (constructs.def).  Every thread keeps the constructs it
// entered on a small stack, so that the stream's regions stay nested
// whatever the runtime reports: the end of a construct that is not on the
// stack (begun before MPI_Init, or its begin not reported) is ignored, and
// the end of one below the top also leaves those above it.  Nothing here
// locks or calls the system; a thread's first event allocates its buffer.
#include "callbacks.hpp"

#include <atomic>

#include "runtime/regions.hpp"
#include "runtime/runtime.hpp"

namespace onlinews::ompt {
namespace {

using rt::OmpConstruct;

// Constructs a thread is inside (as recorded), innermost last; beyond the
// stack's depth only counted (and their ends taken as theirs).
constexpr int kDepth = 64;
struct Open {
  OmpConstruct at[kDepth];
  int depth = 0;
  int overflow = 0;
};
constinit thread_local Open t_open{};

void enter(OmpConstruct c, std::int32_t team_size = 0, std::uint64_t team = 0, std::uint8_t flags = 0) {
  if (!rt::recording()) return;
  if (t_open.depth == kDepth) {
    ++t_open.overflow;
    return;
  }
  rt::record_enter(rt::raw_now(), rt::omp_region(c), team_size, team, flags);
  t_open.at[t_open.depth++] = c;
}
// Leaves `c` at `at` (raw clock; 0: now).
void leave(OmpConstruct c, std::uint64_t at = 0) {
  if (t_open.overflow > 0) {
    --t_open.overflow;
    return;
  }
  int k = t_open.depth;
  while (k > 0 && t_open.at[k - 1] != c) --k;
  if (k == 0) return;  // (not entered here)
  const bool on = rt::recording();
  const std::uint64_t t = !on ? 0 : at != 0 ? at : rt::raw_now();
  while (t_open.depth >= k) {
    --t_open.depth;
    if (on) rt::record_leave(t);
  }
}
void scope(ompt_scope_endpoint_t endpoint, OmpConstruct c, std::uint64_t end_at = 0) {
  if (endpoint == ompt_scope_begin) {
    enter(c);
  } else if (endpoint == ompt_scope_end) {
    leave(c, end_at);
  }
}

// Teams.  libomp reports the end of a worker's implicit barrier at the end
// of a parallel region (its wait, the barrier, its implicit task) only when
// it releases the worker into the next region: the serial code between
// would be barrier waiting.  So each parallel region gets a process-wide id
// (its parallel data, and its members' implicit task data), and its master
// publishes the join time in a small table; a worker whose implicit-barrier
// wait ends after its team's join ends the wait, the barrier and its
// implicit task at the join, and is idle from there ("!$omp idle").  (Lock-
// free: an id tag per slot; a slot reused by a later team only loses the
// correction for the earlier one.)
constexpr std::size_t kTeams = 1024;
struct Team {
  std::atomic<std::uint64_t> id{0}, join{0};
  std::atomic<bool> nested{false};  // forked inside another team's implicit task
};
Team g_teams[kTeams];
std::atomic<std::uint64_t> g_next_team{1};
std::atomic<unsigned long long> g_nested{0};  // teams begun inside a team (ompt.hpp)
// The join of this thread's team once its wait ended after it (0: none).
constinit thread_local std::uint64_t t_joined = 0;

bool is_implicit_barrier(ompt_sync_region_t kind) {
  return kind == ompt_sync_region_barrier_implicit || kind == ompt_sync_region_barrier_implicit_workshare ||
         kind == ompt_sync_region_barrier_implicit_parallel;
}

// Task data of tied explicit tasks (task_create marks them), and once they
// ran on a thread.
constexpr std::uint64_t kExplicitTask = 0x6f6e6c696e6577ull;
constexpr std::uint64_t kStartedTask = kExplicitTask + 1;

}  // namespace

unsigned long long nested_teams() { return g_nested.load(std::memory_order_relaxed); }

void on_thread_begin(ompt_thread_t, ompt_data_t*) {
  // The location starts here (its root region), not at its first construct.
  if (rt::recording() && rt::t_buffer == nullptr) rt::attach_thread();
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel, unsigned int requested, int flags,
                       const void*) {
  if ((flags & ompt_parallel_league) != 0) return;
  bool nested = false;
  for (int k = 0; k < t_open.depth && !nested; ++k) nested = t_open.at[k] == OmpConstruct::ImplicitTask;
  // (A nested region the runtime serializes, a team of 1, is no team.)
  if (nested && requested > 1) g_nested.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t id = 0;
  if (parallel != nullptr) {
    id = g_next_team.fetch_add(1, std::memory_order_relaxed);
    parallel->value = id;
    Team& team = g_teams[id % kTeams];
    team.join.store(0, std::memory_order_relaxed);
    team.nested.store(nested, std::memory_order_relaxed);
    team.id.store(id, std::memory_order_release);
  }
  // (The fork names its team too: the analysis tells team events by it.)
  enter(OmpConstruct::Parallel, 0, id, nested ? evflag::kNestedTeam : 0);
}
void on_parallel_end(ompt_data_t* parallel, ompt_data_t*, int flags, const void*) {
  if ((flags & ompt_parallel_league) != 0) return;
  const std::uint64_t t = rt::raw_now();
  if (parallel != nullptr && parallel->value != 0) {
    Team& team = g_teams[parallel->value % kTeams];
    if (team.id.load(std::memory_order_acquire) == parallel->value) team.join.store(t, std::memory_order_release);
  }
  leave(OmpConstruct::Parallel, t);
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, unsigned int actual,
                      unsigned int, int flags) {
  // (The initial task is the whole program: the root region.)
  if ((flags & ompt_task_initial) != 0) return;
  if (endpoint == ompt_scope_begin) {
    const std::uint64_t team = parallel != nullptr ? parallel->value : 0;
    if (task != nullptr) task->value = team;
    const Team& slot = g_teams[team % kTeams];
    const bool nested = team != 0 && slot.id.load(std::memory_order_acquire) == team &&
                        slot.nested.load(std::memory_order_relaxed);
    // (The team's size and id: idle threads, omp_idle.cpp; barrier
    // instances, omp_barrier.cpp.)
    return enter(OmpConstruct::ImplicitTask, static_cast<std::int32_t>(actual), team,
                 nested ? evflag::kNestedTeam : 0);
  }
  const std::uint64_t joined = t_joined;
  t_joined = 0;
  leave(OmpConstruct::ImplicitTask, joined);
  if (joined != 0 && rt::recording()) {
    rt::record_enter(joined, rt::omp_region(OmpConstruct::Idle));
    rt::record_leave(rt::raw_now());
  }
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*,
                    const void*) {
  switch (kind) {
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
      return scope(endpoint, OmpConstruct::BarrierImplicit, t_joined);
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit:
      return scope(endpoint, OmpConstruct::BarrierExplicit);
    case ompt_sync_region_taskwait: return scope(endpoint, OmpConstruct::Taskwait);
    case ompt_sync_region_taskgroup: return scope(endpoint, OmpConstruct::Taskgroup);
    case ompt_sync_region_reduction: return scope(endpoint, OmpConstruct::Reduction);
    default: return scope(endpoint, OmpConstruct::BarrierImplementation);
  }
}

// The waiting part of a synchronization, inside its construct (tasks the
// thread runs while it waits nest inside it: not waiting).
void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
                         const void*) {
  if (endpoint == ompt_scope_end && is_implicit_barrier(kind) && task != nullptr && task->value != 0) {
    const Team& team = g_teams[task->value % kTeams];
    if (team.id.load(std::memory_order_acquire) == task->value) {
      const std::uint64_t join = team.join.load(std::memory_order_acquire);
      if (join != 0 && join < rt::raw_now()) t_joined = join;
    }
  }
  scope(endpoint, OmpConstruct::SyncWait, t_joined);
}

void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, uint64_t, const void*) {
  switch (kind) {
    case ompt_work_loop: return scope(endpoint, OmpConstruct::Loop);
    case ompt_work_sections: return scope(endpoint, OmpConstruct::Sections);
    case ompt_work_single_executor:
    case ompt_work_single_other: return scope(endpoint, OmpConstruct::Single);
    case ompt_work_workshare: return scope(endpoint, OmpConstruct::Workshare);
    case ompt_work_distribute: return scope(endpoint, OmpConstruct::Distribute);
    case ompt_work_taskloop: return scope(endpoint, OmpConstruct::Taskloop);
    default:
      // OpenMP 5.2 splits loops by schedule (ompt_work_loop_static = 10,
      // _dynamic, _guided, _other = 13); scope (8): its body is the
      // thread's own code.
      if (kind >= 10 && kind <= 13) scope(endpoint, OmpConstruct::Loop);
      return;
  }
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void*) {
  scope(endpoint, OmpConstruct::Masked);
}

// Critical sections and ordered: from the request to the release, with the
// waiting (request to acquisition) inside as "!$omp wait".  Lock routines:
// omp_set_lock from the request to the acquisition (a nest lock its owner
// sets again: the nest_lock callback), omp_unset_lock at the release.  Test locks and atomics are not recorded
// (a test never waits; atomics are too frequent).
void on_mutex_acquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t, const void*) {
  switch (kind) {
    case ompt_mutex_critical:
      enter(OmpConstruct::Critical);
      return enter(OmpConstruct::SyncWait);
    case ompt_mutex_ordered:
      enter(OmpConstruct::Ordered);
      return enter(OmpConstruct::SyncWait);
    case ompt_mutex_lock:
    case ompt_mutex_nest_lock: return enter(OmpConstruct::LockSet);
    default: return;
  }
}
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  if (kind == ompt_mutex_lock || kind == ompt_mutex_nest_lock) leave(OmpConstruct::LockSet);
  if (kind == ompt_mutex_critical || kind == ompt_mutex_ordered) leave(OmpConstruct::SyncWait);
}
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t, const void*) {
  if (endpoint == ompt_scope_begin) leave(OmpConstruct::LockSet);
}
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  switch (kind) {
    case ompt_mutex_critical: return leave(OmpConstruct::Critical);
    case ompt_mutex_ordered: return leave(OmpConstruct::Ordered);
    case ompt_mutex_lock:
    case ompt_mutex_nest_lock:
      enter(OmpConstruct::LockUnset);
      return leave(OmpConstruct::LockUnset);
    default: return;
  }
}

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* new_task, int flags, int, const void*) {
  // (Untied tasks may resume on another thread: not recorded.)
  const bool tied = (flags & ompt_task_explicit) != 0 && (flags & ompt_task_untied) == 0;
  if (new_task != nullptr) new_task->value = tied ? kExplicitTask : 0;
}
// A tied explicit task is entered where it first runs and left where it
// ends (completed, cancelled, detached).  While it is suspended (at a
// taskwait, a taskgroup's end, a yield) the thread runs other tasks inside
// it, nested, and it resumes on the same thread: switches are no events.
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  if (status == ompt_task_early_fulfill || status == ompt_task_late_fulfill) return;
  const bool ends = status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_detach;
  if (ends && prior != nullptr && prior->value == kStartedTask) leave(OmpConstruct::Task);
  if (next != nullptr && next->value == kExplicitTask) {
    next->value = kStartedTask;
    enter(OmpConstruct::Task);
  }
}

// Dispatch (OpenMP 5.1; libomp 16 delivers it, libomp 14 never): the
// thread begins its share of a sections construct, or a chunk of a loop's
// iterations.  A share of sections is a region ("!$omp section") from its
// dispatch to the next one or to the end of the construct (which leaves
// what is above it).  Chunks are only counted: a dynamic schedule's chunk
// may be a few iterations, and an event pair per chunk would cost about as
// much as the chunk.  (libomp runs GCC-compiled sections as a loop whose
// chunks are the sections.)
void on_dispatch(ompt_data_t*, ompt_data_t*, ompt_dispatch_t kind, ompt_data_t) {
  if (kind == ompt_dispatch_section) {
    if (t_open.overflow == 0 && t_open.depth > 0 && t_open.at[t_open.depth - 1] == OmpConstruct::Section) {
      leave(OmpConstruct::Section);
    }
    return enter(OmpConstruct::Section);
  }
  // (ompt_dispatch_ws_loop_chunk, _taskloop_chunk, _distribute_chunk: 3-5
  // in OpenMP 5.2; per-iteration dispatches are not chunks.)
  if (kind >= 3 && kind <= 5 && rt::recording() && rt::t_buffer != nullptr) rt::t_buffer->count_dispatched_chunk();
}

}  // namespace onlinews::ompt
