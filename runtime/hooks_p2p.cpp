// Hooks of point-to-point calls: blocking, nonblocking, persistent and
// matched-probe receives.  Events are recorded after the call succeeded,
// between the call's Enter and Leave; MPI_PROC_NULL peers record nothing.
// The request table and the matched-probe table are shared between threads
// under MPI_THREAD_MULTIPLE: every access holds a SharedGuard.
#include "hooks_common.hpp"

namespace onlinews::rt::hooks {

void pre_send(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_send(Call& c, int rc) {
  if (rc == MPI_SUCCESS && c.comm_ok && c.peer != MPI_PROC_NULL) {
    record(Event::message(EventKind::Send, c.t_enter, c.comm_id, c.peer, c.tag, type_bytes(c.count, c.type), 0,
                          c.mode));
  }
  call_leave();
}

void pre_recv(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_recv(Call& c, int rc) {
  const std::uint64_t t = raw_now();
  if (rc == MPI_SUCCESS && c.comm_ok && c.status->MPI_SOURCE != MPI_PROC_NULL) {
    record(Event::message(EventKind::Recv, t, c.comm_id, c.status->MPI_SOURCE, c.status->MPI_TAG, 0));
  }
  call_leave(t);
}

void pre_sendrecv(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_sendrecv(Call& c, int rc) {
  const std::uint64_t t = raw_now();
  if (rc == MPI_SUCCESS && c.comm_ok) {
    if (c.peer != MPI_PROC_NULL) {
      record(Event::message(EventKind::Send, c.t_enter, c.comm_id, c.peer, c.tag, type_bytes(c.count, c.type)));
    }
    if (c.status->MPI_SOURCE != MPI_PROC_NULL) {
      record(Event::message(EventKind::Recv, t, c.comm_id, c.status->MPI_SOURCE, c.status->MPI_TAG, 0));
    }
  }
  call_leave(t);
}

namespace {

// Records the start of a tracked request (new, or a persistent one being
// started): SendRequest or RecvRequest with the request's envelope.
void start_request(State& s, RequestInfo& r, std::uint64_t t) {
  if (r.active) return;
  r.active = true;
  ++s.comms.rec(r.comm).open_requests;
  const EventKind k = r.kind == RequestInfo::kSend ? EventKind::SendRequest : EventKind::RecvRequest;
  record(Event::message(k, t, r.comm, r.peer, r.tag, r.bytes, r.id, r.flags));
}

// Persistent requests, cancellation and freeing from a thread that is not
// analyzed: the tool lets go of a request the MPI thread tracks.
bool other_thread(State* s, int rc, MPI_Request h) {
  if (s == nullptr || on_analyzed_thread()) return false;
  if (rc == MPI_SUCCESS) abandon_request(*s, h);
  return true;
}

}  // namespace

void pre_isend(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_isend(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && c.comm_ok && c.peer != MPI_PROC_NULL && s != nullptr) {
    const std::uint64_t bytes = type_bytes(c.count, c.type);
    SharedGuard guard;
    start_request(*s, s->requests.add(*c.request, c.comm_id, RequestInfo::kSend, c.mode, c.peer, c.tag, bytes),
                  c.t_enter);
  }
  call_leave();
}

void pre_irecv(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_irecv(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && c.comm_ok && c.src != MPI_PROC_NULL && s != nullptr) {
    SharedGuard guard;
    RequestInfo& r =
        s->requests.add(*c.request, c.comm_id, RequestInfo::kRecv, 0, norm_source(c.src), norm_tag(c.rtag));
    start_request(*s, r, c.t_enter);
  }
  call_leave();
}

void pre_send_init(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_send_init(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && c.comm_ok && c.peer != MPI_PROC_NULL && s != nullptr) {
    const std::uint64_t bytes = type_bytes(c.count, c.type);
    SharedGuard guard;
    s->requests.add(*c.request, c.comm_id, RequestInfo::kSend, static_cast<std::uint8_t>(c.mode | evflag::kPersistent),
                    c.peer, c.tag, bytes);
  }
  call_leave();
}

void pre_recv_init(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_recv_init(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && c.comm_ok && c.src != MPI_PROC_NULL && s != nullptr) {
    SharedGuard guard;
    s->requests.add(*c.request, c.comm_id, RequestInfo::kRecv, evflag::kPersistent, norm_source(c.src),
                    norm_tag(c.rtag));
  }
  call_leave();
}

void pre_start(Call& c) { call_enter(c); }
void post_start(Call& c, int rc) {
  State* s = state();
  if (!other_thread(s, rc, *c.request) && rc == MPI_SUCCESS && s != nullptr) {
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(*c.request)) start_request(*s, *r, c.t_enter);
  }
  call_leave();
}

void pre_startall(Call& c) { call_enter(c); }
void post_startall(Call& c, int rc) {
  State* s = state();
  for (int i = 0; i < c.n; ++i) {
    if (other_thread(s, rc, c.requests[i]) || rc != MPI_SUCCESS || s == nullptr) continue;
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(c.requests[i])) start_request(*s, *r, c.t_enter);
  }
  call_leave();
}

void pre_request_free(Call& c) {
  call_enter(c);
  c.saved_request = *c.request;
}
void post_request_free(Call& c, int rc) {
  State* s = state();
  if (!other_thread(s, rc, c.saved_request) && rc == MPI_SUCCESS && s != nullptr) {
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(c.saved_request)) {
      // A freed active request completes unobserved: the analysis never sees
      // its completion (its message is still matched by the receiver).
      if (r->active) --s->comms.rec(r->comm).open_requests;
      s->requests.erase(c.saved_request);
    }
  }
  call_leave();
}

void pre_cancel(Call& c) { call_enter(c); }
void post_cancel(Call& c, int rc) {
  State* s = state();
  if (!other_thread(s, rc, *c.request) && rc == MPI_SUCCESS && s != nullptr) {
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(*c.request)) r->cancel_requested = true;
  }
  call_leave();
}

// Probes: a Probe event with the actual envelope (and, for matched probes, a
// message handle id that the Match event in MPI_Mrecv/Imrecv repeats), so
// that the analysis can tie each probe to the receive of its message.
namespace {
void record_probe(Call& c, std::uint32_t message_id) {
  if (!c.comm_ok || c.status->MPI_SOURCE == MPI_PROC_NULL) return;
  record(Event::message(EventKind::Probe, raw_now(), c.comm_id, c.status->MPI_SOURCE, c.status->MPI_TAG, 0,
                        message_id));
}
void remember_message(Call& c) {
  State* s = state();
  if (s == nullptr || !c.comm_ok || *c.message == MPI_MESSAGE_NULL || *c.message == MPI_MESSAGE_NO_PROC) return;
  std::uint32_t id = 0;
  {
    SharedGuard guard;
    id = s->requests.next_id();  // any nonzero id unique among open messages
    s->messages[message_key(*c.message)] = {c.comm_id, c.status->MPI_SOURCE, c.status->MPI_TAG, id};
  }
  record_probe(c, id);
}

// The matched-probe message that MPI_Mrecv/MPI_Imrecv receives, if the MPI
// thread probed it; forgotten either way.  On a thread that is not analyzed,
// its communicator becomes mixed.
bool take_message(State* s, MPI_Message m, MessageInfo& out) {
  if (s == nullptr) return false;
  SharedGuard guard;
  auto it = s->messages.find(message_key(m));
  if (it == s->messages.end()) return false;
  out = it->second;
  s->messages.erase(it);
  if (on_analyzed_thread()) return true;
  s->comms.mark_mixed(out.comm, CommRegistry::kMixedP2P);
  return false;
}
}  // namespace

void pre_probe(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_probe(Call& c, int rc) {
  if (rc == MPI_SUCCESS) record_probe(c, 0);
  call_leave();
}

// Unsuccessful polls only take time: the communicator is looked up (and an
// untracked one counted) only when a poll found a message.
void pre_iprobe(Call& c) { poll_begin(c); }
void post_iprobe(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  resolve_comm(c);
  if (rc == MPI_SUCCESS) record_probe(c, 0);
  call_leave();
}

void pre_mprobe(Call& c) {
  call_enter(c);
  resolve_comm(c);
}
void post_mprobe(Call& c, int rc) {
  if (rc == MPI_SUCCESS) remember_message(c);
  call_leave();
}

void pre_improbe(Call& c) { poll_begin(c); }
void post_improbe(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  resolve_comm(c);
  if (rc == MPI_SUCCESS) remember_message(c);
  call_leave();
}

void pre_mrecv(Call& c) {
  call_enter(c);
  c.saved_message = *c.message;
}
void post_mrecv(Call& c, int rc) {
  State* s = state();
  const std::uint64_t t = raw_now();
  MessageInfo m;
  if (take_message(s, c.saved_message, m) && rc == MPI_SUCCESS) {
    record(Event::message(EventKind::Match, t, m.comm, m.source, m.tag, 0, m.id));
    record(Event::message(EventKind::Recv, t, m.comm, m.source, m.tag, 0));
  }
  call_leave(t);
}

void pre_imrecv(Call& c) {
  call_enter(c);
  c.saved_message = *c.message;
}
void post_imrecv(Call& c, int rc) {
  State* s = state();
  MessageInfo m;
  if (take_message(s, c.saved_message, m) && rc == MPI_SUCCESS) {
    record(Event::message(EventKind::Match, c.t_enter, m.comm, m.source, m.tag, 0, m.id));
    SharedGuard guard;
    start_request(*s, s->requests.add(*c.request, m.comm, RequestInfo::kRecv, 0, m.source, m.tag), c.t_enter);
  }
  call_leave();
}

}  // namespace onlinews::rt::hooks
