// Helpers shared by the hook files (internal to runtime/).
#pragma once
#include "hooks.hpp"
#include "shared_guard.hpp"
#include "state.hpp"

namespace onlinews::rt {

// Looks up the call's communicator (resolve_comm) or window (resolve_window:
// registered as a communicator, comms.hpp).  False (and the call is
// recorded as time only) when it is not tracked or the call comes from a
// thread other than the one whose MPI calls are analyzed.  Such a thread's
// use of a tracked communicator marks it mixed: its messages (or
// collectives) are then left out of the matching (CommRegistry::mark_mixed).
template <class Lookup>
inline bool resolve_id(Call& c, bool collective, Lookup lookup) {
  State* s = state();
  c.comm_ok = false;
  if (s == nullptr) return false;
  int id = kUnknownComm;
  {
    SharedGuard guard;
    id = lookup(s->comms);
  }
  if (!on_analyzed_thread()) {
    s->comms.mark_mixed(id, collective ? CommRegistry::kMixedCollective : CommRegistry::kMixedP2P);
    if (collective && id != kUnknownComm) {
      c.comm_id = static_cast<std::uint16_t>(id);
      c.decide_only = true;
    }
    return false;
  }
  if (id == kUnknownComm) {
    s->untracked_calls.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  c.comm_id = static_cast<std::uint16_t>(id);
  c.comm_ok = true;
  return true;
}
inline bool resolve_comm(Call& c, bool collective = false) {
  return resolve_id(c, collective, [&c](const CommRegistry& r) { return r.lookup(c.comm); });
}
inline bool resolve_window(Call& c, MPI_Win w, bool collective) {
  return resolve_id(c, collective, [w](const CommRegistry& r) { return r.lookup_window(w); });
}

// A thread whose calls are not analyzed started, completed, cancelled or
// freed request `h`: if the MPI thread tracks it, its communicator becomes
// mixed and the tool forgets the request.  Takes the guard.
void abandon_request(State& s, MPI_Request h);

inline std::uint64_t type_bytes(int count, MPI_Datatype t) {
  if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(t, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size > 0 ? size : 0);
}

inline std::int32_t norm_source(int src) { return src == MPI_ANY_SOURCE ? kAnySource : src; }
inline std::int32_t norm_tag(int tag) { return tag == MPI_ANY_TAG ? kAnyTag : tag; }

inline std::uint64_t message_key(MPI_Message m) {
  std::uint64_t k = 0;
  __builtin_memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
  return k;
}

// Polling calls (MPI_Test*, MPI_Iprobe, MPI_Improbe): the pre hook only
// takes the time (and counts a call of a thread that is not analyzed); the post hook records the call normally when it found
// something, and folds unsuccessful calls in a row into one visit otherwise
// (see ThreadBuffer::defer_leave).
inline void poll_begin(Call& c) {
  c.t_enter = entry_time(c.caller, c.region);
  if (!on_analyzed_thread()) count_time_only_call();
}
// A poll that found something: its events and call_leave() follow.  After
// unsuccessful polls of the same call it ends their visit (a polling loop is
// one visit, so a probe's Late Sender counts from the loop's start).
inline void poll_found(Call& c) {
  ThreadBuffer* b = t_buffer != nullptr ? t_buffer : attach_thread();
  if (b != nullptr && b->polling(c.region)) {
    b->resume_poll();
    return;
  }
  record_enter(c.t_enter, c.region);
}
inline void poll_nothing(Call& c) {
  ThreadBuffer* b = t_buffer != nullptr ? t_buffer : attach_thread();
  if (b == nullptr) return;
  const std::uint64_t t = raw_now();
  if (b->polling(c.region)) {
    b->extend_poll(t);
    return;
  }
  b->push(Event::enter(c.t_enter, c.region));  // records any other pending poll's Leave first
  b->defer_leave(t, c.region);
}

// Records the completion of one tracked request (Wait*/Test* and friends).
void complete_request(State& s, MPI_Request handle, const MPI_Status* status, bool by_test);

}  // namespace onlinews::rt
