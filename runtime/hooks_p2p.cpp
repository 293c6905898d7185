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
  activate(s, r);
  const EventKind k = r.kind == RequestInfo::kSend ? EventKind::SendRequest : EventKind::RecvRequest;
  record(Event::message(k, t, r.comm, r.peer, r.tag, r.bytes, r.id, r.flags));
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
  if (rc == MPI_SUCCESS && s != nullptr) {
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(*c.request)) start_request(*s, *r, c.t_enter);
  }
  call_leave();
}

void pre_startall(Call& c) { call_enter(c); }
void post_startall(Call& c, int rc) {
  State* s = state();
  for (int i = 0; i < c.n; ++i) {
    if (rc != MPI_SUCCESS || s == nullptr) continue;
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(c.requests[i])) start_request(*s, *r, c.t_enter);
  }
  call_leave();
}

// (Under MPI_THREAD_MULTIPLE the handle may belong to another thread's new
// request by the time the post hook runs: only the request the pre hook
// saw, by id, is forgotten.)
void pre_request_free(Call& c) {
  call_enter(c);
  c.saved_request = *c.request;
  State* s = state();
  if (s == nullptr) return;
  SharedGuard guard;
  if (const RequestInfo* r = s->requests.find(c.saved_request)) c.saved_id = r->id;
}
void post_request_free(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && s != nullptr && c.saved_id != 0) {
    SharedGuard guard;
    if (RequestInfo* r = s->requests.find(c.saved_request); r != nullptr && r->id == c.saved_id) {
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
  if (rc == MPI_SUCCESS && s != nullptr) {
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

// The matched-probe message that MPI_Mrecv/MPI_Imrecv receives, if a
// tracked probe found it (on any thread); forgotten either way.  Taken in
// the pre hook: once MPI received the message, it may give the handle to
// another thread's next matched probe (MPI_THREAD_MULTIPLE).
thread_local MessageInfo t_taken;
thread_local bool t_taken_ok = false;
void take_message(MPI_Message m) {
  t_taken_ok = false;
  State* s = state();
  if (s == nullptr) return;
  SharedGuard guard;
  auto it = s->messages.find(message_key(m));
  if (it == s->messages.end()) return;
  t_taken = it->second;
  t_taken_ok = true;
  s->messages.erase(it);
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
  take_message(*c.message);
}
void post_mrecv(Call&, int rc) {
  const std::uint64_t t = raw_now();
  const MessageInfo& m = t_taken;
  if (t_taken_ok && rc == MPI_SUCCESS) {
    record(Event::message(EventKind::Match, t, m.comm, m.source, m.tag, 0, m.id));
    record(Event::message(EventKind::Recv, t, m.comm, m.source, m.tag, 0));
  }
  call_leave(t);
}

void pre_imrecv(Call& c) {
  call_enter(c);
  take_message(*c.message);
}
void post_imrecv(Call& c, int rc) {
  State* s = state();
  const MessageInfo m = t_taken;
  if (t_taken_ok && rc == MPI_SUCCESS && s != nullptr) {
    record(Event::message(EventKind::Match, c.t_enter, m.comm, m.source, m.tag, 0, m.id));
    SharedGuard guard;
    start_request(*s, s->requests.add(*c.request, m.comm, RequestInfo::kRecv, 0, m.source, m.tag), c.t_enter);
  }
  call_leave();
}

}  // namespace onlinews::rt::hooks
