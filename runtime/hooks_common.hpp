// Helpers shared by the hook files (internal to runtime/).
#pragma once
#include "hooks.hpp"
#include "shared_guard.hpp"
#include "state.hpp"

namespace onlinews::rt {

// Looks up the call's communicator (resolve_comm) or window (resolve_window:
// registered as a communicator, comms.hpp).  False (and the call is
// recorded as time only) when it is not tracked.  Point-to-point calls are
// analyzed on every thread (under MPI_THREAD_MULTIPLE the analysis matches
// them per MPI's rules and leaves out what is ambiguous); collectives and
// RMA calls only on the MPI thread there: another thread's use of a
// tracked communicator or window marks it mixed, and its collectives (or
// RMA calls) are then left out of the analysis (CommRegistry::mark_mixed).
enum class Use : std::uint8_t { P2P, Collective, Rma, RmaCollective };
template <class Lookup>
inline bool resolve_id(Call& c, Use use, Lookup lookup) {
  State* s = state();
  c.comm_ok = false;
  if (s == nullptr) return false;
  int id = kUnknownComm;
  {
    SharedGuard guard;
    id = lookup(s->comms);
  }
  if (use != Use::P2P && !on_analyzed_thread()) {
    count_time_only_call();
    const bool collective = use == Use::Collective || use == Use::RmaCollective;
    s->comms.mark_mixed(id, collective ? CommRegistry::kMixedCollective : CommRegistry::kMixedRma);
    if (use == Use::Collective && id != kUnknownComm) {
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
  return resolve_id(c, collective ? Use::Collective : Use::P2P,
                    [&c](const CommRegistry& r) { return r.lookup(c.comm); });
}
inline bool resolve_window(Call& c, MPI_Win w, bool collective) {
  return resolve_id(c, collective ? Use::RmaCollective : Use::Rma,
                    [w](const CommRegistry& r) { return r.lookup_window(w); });
}

inline std::uint64_t type_bytes(int count, MPI_Datatype t) {
  if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(t, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size > 0 ? size : 0);
}

// A tracked request becomes active: its communicator keeps one more open
// request (a freed communicator is released only once none is left).
inline void activate(State& s, RequestInfo& r) {
  r.active = true;
  ++s.comms.rec(r.comm).open_requests;
}

inline std::int32_t norm_source(int src) { return src == MPI_ANY_SOURCE ? kAnySource : src; }
inline std::int32_t norm_tag(int tag) { return tag == MPI_ANY_TAG ? kAnyTag : tag; }

inline std::uint64_t message_key(MPI_Message m) {
  std::uint64_t k = 0;
  __builtin_memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
  return k;
}

// Polling calls (MPI_Test*, MPI_Iprobe, MPI_Improbe): the pre hook only
// takes the time; the post hook records the call normally when it found
// something, and folds unsuccessful calls in a row into one visit otherwise
// (see ThreadBuffer::defer_leave).
inline void poll_begin(Call& c) {
  c.t_enter = entry_time(c.caller, c.region);
  if (t_buffer != nullptr) t_buffer->set_poll_since(c.t_enter);  // (read only while sampling)
}
// A poll that found something: its events and call_leave() follow.  After
// unsuccessful polls of the same call it ends their visit (a polling loop is
// one visit, so a probe's Late Sender counts from the loop's start).
inline void poll_found(Call& c) {
  ThreadBuffer* b = t_buffer != nullptr ? t_buffer : attach_thread();
  if (b != nullptr) b->set_poll_since(0);
  if (b != nullptr && b->polling(c.region, c.caller)) {
    b->resume_poll();
    return;
  }
  record(call_enter_event(c, c.t_enter));
}
inline void poll_nothing(Call& c) {
  ThreadBuffer* b = t_buffer != nullptr ? t_buffer : attach_thread();
  if (b == nullptr) return;
  b->set_poll_since(0);
  const std::uint64_t t = raw_now();
  if (b->polling(c.region, c.caller)) {
    b->extend_poll(t);
    return;
  }
  b->push(call_enter_event(c, c.t_enter));  // records any other pending poll's Leave first
  b->defer_leave(t, c.region, c.caller);
}

// Records the completion of one tracked request (Wait*/Test* and friends);
// `claim`: the entry the call's pre hook copied (hooks_completion.cpp).
void complete_request(State& s, MPI_Request handle, const MPI_Status* status, bool by_test, const void* claim);

}  // namespace onlinews::rt
