// OMPT callbacks -> Enter/Leave of OpenMP construct regions in the calling
// thread's buffer (constructs.def).  Every thread keeps the constructs it
// entered on a small stack and leaves only the one on top: a construct
// begun before MPI_Init (or one whose begin the runtime did not report) is
// never left, so the stream's regions stay nested whatever the runtime
// reports.  Nothing here allocates, locks or calls the system.
#include "callbacks.hpp"

#include "runtime/regions.hpp"
#include "runtime/runtime.hpp"

namespace onlinews::ompt {
namespace {

using rt::OmpConstruct;

// Constructs a thread is inside (as recorded), innermost last.
struct Open {
  OmpConstruct at[64];
  int depth = 0;
};
constinit thread_local Open t_open{};

void enter(OmpConstruct c) {
  if (!rt::recording() || t_open.depth >= 64) return;
  rt::record_enter(rt::raw_now(), rt::omp_region(c));
  t_open.at[t_open.depth++] = c;
}
void leave(OmpConstruct c) {
  if (t_open.depth == 0 || t_open.at[t_open.depth - 1] != c) return;
  --t_open.depth;
  if (rt::recording()) rt::record_leave(rt::raw_now());
}
void scope(ompt_scope_endpoint_t endpoint, OmpConstruct c) {
  if (endpoint == ompt_scope_begin) {
    enter(c);
  } else if (endpoint == ompt_scope_end) {
    leave(c);
  }
}

// Task data of explicit tasks (task_create marks them).
constexpr std::uint64_t kExplicitTask = 0x6f6e6c696e6577ull;

}  // namespace

void on_thread_begin(ompt_thread_t, ompt_data_t*) {
  // The location starts here (its root region), not at its first construct.
  if (rt::recording() && rt::t_buffer == nullptr) rt::attach_thread();
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int, int flags, const void*) {
  if ((flags & ompt_parallel_league) == 0) enter(OmpConstruct::Parallel);
}
void on_parallel_end(ompt_data_t*, ompt_data_t*, int flags, const void*) {
  if ((flags & ompt_parallel_league) == 0) leave(OmpConstruct::Parallel);
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, unsigned int, unsigned int,
                      int flags) {
  // (The initial task is the whole program: the root region.)
  if ((flags & ompt_task_initial) == 0) scope(endpoint, OmpConstruct::ImplicitTask);
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*,
                    const void*) {
  switch (kind) {
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
      return scope(endpoint, OmpConstruct::BarrierImplicit);
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit:
      return scope(endpoint, OmpConstruct::BarrierExplicit);
    case ompt_sync_region_taskwait: return scope(endpoint, OmpConstruct::Taskwait);
    case ompt_sync_region_taskgroup: return scope(endpoint, OmpConstruct::Taskgroup);
    case ompt_sync_region_reduction: return scope(endpoint, OmpConstruct::Reduction);
    default: return scope(endpoint, OmpConstruct::BarrierImplementation);
  }
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
    default: return;  // (scope: its body is the thread's own code)
  }
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void*) {
  scope(endpoint, OmpConstruct::Masked);
}

// Critical sections and ordered: from the request to the release (waiting
// and body).  Lock routines: omp_set_lock from the request to the
// acquisition, omp_unset_lock at the release.  Test locks and atomics are
// not recorded (a test never waits; atomics are too frequent).
void on_mutex_acquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t, const void*) {
  switch (kind) {
    case ompt_mutex_critical: return enter(OmpConstruct::Critical);
    case ompt_mutex_ordered: return enter(OmpConstruct::Ordered);
    case ompt_mutex_lock:
    case ompt_mutex_nest_lock: return enter(OmpConstruct::LockSet);
    default: return;
  }
}
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  if (kind == ompt_mutex_lock || kind == ompt_mutex_nest_lock) leave(OmpConstruct::LockSet);
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
  if (new_task != nullptr) new_task->value = (flags & ompt_task_explicit) != 0 ? kExplicitTask : 0;
}
// An explicit task runs on this thread from the switch to it until the
// switch away from it (completed, or suspended: a resumed task is entered
// again).
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  if (status == ompt_task_early_fulfill || status == ompt_task_late_fulfill) return;
  if (prior != nullptr && prior->value == kExplicitTask) leave(OmpConstruct::Task);
  if (next != nullptr && next->value == kExplicitTask) enter(OmpConstruct::Task);
}

}  // namespace onlinews::ompt
