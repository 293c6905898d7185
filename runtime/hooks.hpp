// What the generated PMPI wrappers (mpi_wrappers.gen.cpp) see: one Call record
// per intercepted call, filled by argument role, and a pre/post hook pair per
// hook kind (runtime/mpi_functions.spec).  Hooks are called on the thread
// that calls MPI; they never throw and never change arguments the
// application can observe.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "mpi_regions.gen.hpp"
#include "progress.hpp"
#include "runtime.hpp"

namespace onlinews::rt {

struct Call {
  explicit Call(std::uint32_t r) : region(r) {}
  std::uint32_t region;
  const void* caller = nullptr;  // the application's return address into the wrapper
  std::uint8_t mode = 0;  // evflag send mode bits
  CollBytes bytes_rule = CollBytes::None;
  RmaRule rma = RmaRule::None;
  // Roles (see mpi_functions.spec).
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int peer = 0, tag = 0;
  int rcount = 0;
  MPI_Datatype rtype = MPI_DATATYPE_NULL;
  int src = 0, rtag = 0;
  const int* scounts = nullptr;
  const int* rcounts = nullptr;
  const MPI_Datatype* stypes = nullptr;
  const MPI_Datatype* rtypes = nullptr;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Status* status = nullptr;
  MPI_Request* request = nullptr;
  int n = 0;
  MPI_Request* requests = nullptr;
  MPI_Status* statuses = nullptr;
  int* index = nullptr;
  int* flag = nullptr;
  int* outcount = nullptr;
  int* indices = nullptr;
  MPI_Comm* newcomm = nullptr;
  MPI_Comm* comm_inout = nullptr;
  MPI_Message* message = nullptr;
  int required = -1;
  int* provided = nullptr;
  int* argc = nullptr;
  char*** argv = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Win* newwin = nullptr;
  MPI_Win* win_inout = nullptr;
  int rma_assert = 0;
  MPI_Group rma_group = MPI_GROUP_NULL;
  int lock_type = 0;
  // Filled by pre hooks for their post hooks.
  std::uint64_t t_enter = 0;
  std::uint16_t comm_id = 0;  // a window's id for the RMA hooks (windows are registered as communicators)
  bool comm_ok = false;
  // A collective on tracked communicator comm_id from a thread whose
  // collectives are not analyzed (MPI_THREAD_MULTIPLE): time only, but it still counts
  // for the cut decisions (epoch.cpp), which every member must take alike.
  bool decide_only = false;
  MPI_Request saved_request = MPI_REQUEST_NULL;
  std::uint32_t saved_id = 0;  // the tool's id of saved_request (MPI_Request_free)
  const MPI_Request* saved_requests = nullptr;
};

// Statuses for calls made with MPI_STATUSES_IGNORE (the hooks need the actual
// sources and tags).  Thread-local, grows rarely, never shrinks.
MPI_Status* scratch_statuses(int n);

namespace hooks {
#define ONLINEWS_HOOK(name)       \
  void pre_##name(Call& c);       \
  void post_##name(Call& c, int rc);
ONLINEWS_HOOK(init)
ONLINEWS_HOOK(finalize)
ONLINEWS_HOOK(send)
ONLINEWS_HOOK(recv)
ONLINEWS_HOOK(sendrecv)
ONLINEWS_HOOK(isend)
ONLINEWS_HOOK(irecv)
ONLINEWS_HOOK(send_init)
ONLINEWS_HOOK(recv_init)
ONLINEWS_HOOK(start)
ONLINEWS_HOOK(startall)
ONLINEWS_HOOK(request_free)
ONLINEWS_HOOK(cancel)
ONLINEWS_HOOK(wait)
ONLINEWS_HOOK(waitany)
ONLINEWS_HOOK(waitall)
ONLINEWS_HOOK(waitsome)
ONLINEWS_HOOK(test)
ONLINEWS_HOOK(testany)
ONLINEWS_HOOK(testall)
ONLINEWS_HOOK(testsome)
ONLINEWS_HOOK(mprobe)
ONLINEWS_HOOK(improbe)
ONLINEWS_HOOK(iprobe)
ONLINEWS_HOOK(probe)
ONLINEWS_HOOK(mrecv)
ONLINEWS_HOOK(imrecv)
ONLINEWS_HOOK(coll)
ONLINEWS_HOOK(icoll)
ONLINEWS_HOOK(comm_new)
ONLINEWS_HOOK(comm_free)
ONLINEWS_HOOK(win_create)
ONLINEWS_HOOK(win_free)
ONLINEWS_HOOK(rma_coll)
ONLINEWS_HOOK(rma_op)
ONLINEWS_HOOK(rma_sync)
ONLINEWS_HOOK(plain)
#undef ONLINEWS_HOOK
}  // namespace hooks

// Under MPI_THREAD_MULTIPLE the collective, RMA and communicator calls of
// threads other than the MPI thread are recorded as time only; each thread
// counts its own.
inline void count_time_only_call() {
  ThreadBuffer* b = t_buffer != nullptr ? t_buffer : attach_thread();
  if (b != nullptr) b->count_time_only_call();
}

// The Enter of the intercepted call itself, with its call site.
inline Event call_enter_event(const Call& c, std::uint64_t t) {
  return Event::call_enter(t, c.region, g_callsites.load(std::memory_order_relaxed) ? c.caller : nullptr);
}
// Shared by the hooks: enter/leave of the intercepted call itself.
inline void call_enter(Call& c) {
  c.t_enter = entry_time(c.caller, c.region);
  record(call_enter_event(c, c.t_enter));
}
inline void call_leave() { record_leave(raw_now()); }
// For hooks that record an event right before the Leave: one timestamp for both.
inline void call_leave(std::uint64_t t) { record_leave(t); }

}  // namespace onlinews::rt
