// Hooks of MPI_Wait*/MPI_Test*: each completed tracked request becomes a
// SendComplete or RecvComplete event (the latter with the actual source and
// tag from its status).  Handles are saved before the call because MPI
// resets completed ones to MPI_REQUEST_NULL.  A request of the MPI thread
// completed by another thread is forgotten and its communicator marked
// mixed (abandon_request).
#include <vector>

#include "hooks_common.hpp"

namespace onlinews::rt {

void abandon_request(State& s, MPI_Request h) {
  SharedGuard guard;
  RequestInfo* r = s.requests.find(h);
  if (r == nullptr) return;
  s.comms.mark_mixed(r->comm, CommRegistry::kMixedP2P);
  if (r->active) --s.comms.rec(r->comm).open_requests;
  s.requests.erase(h);
}

void complete_request(State& s, MPI_Request handle, const MPI_Status* status, bool by_test) {
  SharedGuard guard;
  RequestInfo* r = s.requests.find(handle);
  if (r == nullptr || !r->active) return;  // untracked, or an inactive persistent request
  r->active = false;
  --s.comms.rec(r->comm).open_requests;
  std::uint8_t flags = by_test ? evflag::kByTest : 0;
  if (r->cancel_requested) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);  // local, reads the status only
    if (cancelled) flags |= evflag::kCancelled;
    r->cancel_requested = false;
  }
  if (r->kind == RequestInfo::kSend) {
    record(Event::message(EventKind::SendComplete, raw_now(), r->comm, r->peer, r->tag, r->bytes, r->id, flags));
  } else {
    record(Event::message(EventKind::RecvComplete, raw_now(), r->comm, status->MPI_SOURCE, status->MPI_TAG, 0,
                          r->id, flags));
  }
  if ((r->flags & evflag::kPersistent) == 0) s.requests.erase(handle);
}

namespace {

const MPI_Request* save_requests(const MPI_Request* reqs, int n) {
  thread_local std::vector<MPI_Request> saved;
  if (n <= 0) return nullptr;
  saved.assign(reqs, reqs + n);
  return saved.data();
}

// The state if the completed requests are to be recorded; on a thread that
// is not analyzed, lets go of the MPI thread's requests among `handles`.
State* analyzed(int rc, const MPI_Request* handles, int n) {
  State* s = state();
  if (rc != MPI_SUCCESS || s == nullptr) return nullptr;
  if (on_analyzed_thread()) return s;
  for (int i = 0; i < n && handles != nullptr; ++i) abandon_request(*s, handles[i]);
  return nullptr;
}

}  // namespace

namespace hooks {

void pre_wait(Call& c) {
  call_enter(c);
  c.saved_request = *c.request;
}
void post_wait(Call& c, int rc) {
  if (State* s = analyzed(rc, &c.saved_request, 1)) complete_request(*s, c.saved_request, c.status, false);
  call_leave();
}

void pre_test(Call& c) {
  poll_begin(c);
  c.saved_request = *c.request;
}
void post_test(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  if (State* s = analyzed(rc, &c.saved_request, 1); s != nullptr && *c.flag) {
    complete_request(*s, c.saved_request, c.status, true);
  }
  call_leave();
}

void pre_waitany(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitany(Call& c, int rc) {
  if (State* s = analyzed(rc, c.saved_requests, c.n); s != nullptr && *c.index != MPI_UNDEFINED && *c.index >= 0 && *c.index < c.n) {
    complete_request(*s, c.saved_requests[*c.index], c.status, false);
  }
  call_leave();
}

void pre_testany(Call& c) {
  poll_begin(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_testany(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  if (State* s = analyzed(rc, c.saved_requests, c.n);
      s != nullptr && *c.flag && *c.index != MPI_UNDEFINED && *c.index >= 0 && *c.index < c.n) {
    complete_request(*s, c.saved_requests[*c.index], c.status, true);
  }
  call_leave();
}

void pre_waitall(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitall(Call& c, int rc) {
  if (State* s = analyzed(rc, c.saved_requests, c.n)) {
    for (int i = 0; i < c.n; ++i) complete_request(*s, c.saved_requests[i], &c.statuses[i], false);
  }
  call_leave();
}

void pre_testall(Call& c) {
  poll_begin(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_testall(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  if (State* s = analyzed(rc, c.saved_requests, c.n); s != nullptr && *c.flag) {
    for (int i = 0; i < c.n; ++i) complete_request(*s, c.saved_requests[i], &c.statuses[i], true);
  }
  call_leave();
}

void pre_waitsome(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitsome(Call& c, int rc) {
  if (State* s = analyzed(rc, c.saved_requests, c.n); s != nullptr && *c.outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *c.outcount; ++k) {
      const int i = c.indices[k];
      if (i >= 0 && i < c.n) complete_request(*s, c.saved_requests[i], &c.statuses[k], false);
    }
  }
  call_leave();
}

void pre_testsome(Call& c) {
  poll_begin(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_testsome(Call& c, int rc) {
  if (rc == MPI_SUCCESS && *c.outcount == 0) return poll_nothing(c);
  poll_found(c);
  if (State* s = analyzed(rc, c.saved_requests, c.n); s != nullptr && *c.outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *c.outcount; ++k) {
      const int i = c.indices[k];
      if (i >= 0 && i < c.n) complete_request(*s, c.saved_requests[i], &c.statuses[k], true);
    }
  }
  call_leave();
}

}  // namespace hooks
}  // namespace onlinews::rt
