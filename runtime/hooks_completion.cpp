// Hooks of MPI_Wait*/MPI_Test*: each completed tracked request becomes a
// SendComplete or RecvComplete event (the latter with the actual source and
// tag from its status).  Handles are saved before the call because MPI
// resets completed ones to MPI_REQUEST_NULL.  Under MPI_THREAD_MULTIPLE any
// thread may complete a request another thread started (the request table
// is shared, under the guard).
#include <vector>

#include "hooks_common.hpp"

namespace onlinews::rt {

namespace {

// Under MPI_THREAD_MULTIPLE, MPI may give a completed request's handle to
// another thread's new request before this thread's post hook runs.  So the
// pre hook copies the table's entries of the handles the call may complete
// (claim), and the post hook completes from those copies, touching the
// table's entry only while it is still the same request (same id).  (MPI
// forbids two threads to complete one request at once.)  Below MULTIPLE the
// table is read in the post hook directly.
struct Claim {
  bool found = false;
  RequestInfo info;
};
thread_local std::vector<Claim> t_claims;
thread_local bool t_claiming = false;

void claim(const MPI_Request* handles, int n) {
  t_claiming = g_threads_share_mpi.load(std::memory_order_relaxed);
  if (!t_claiming) return;
  State* s = state();
  t_claims.assign(static_cast<std::size_t>(n > 0 ? n : 0), Claim{});
  if (s == nullptr || handles == nullptr) return;
  SharedGuard guard;
  for (int i = 0; i < n; ++i) {
    if (const RequestInfo* r = s->requests.find(handles[i])) t_claims[static_cast<std::size_t>(i)] = {true, *r};
  }
}
// The claim of the call's i-th handle (nullptr: read the table).
const Claim* claim_of(int i) {
  if (!t_claiming || i < 0 || static_cast<std::size_t>(i) >= t_claims.size()) return nullptr;
  return &t_claims[static_cast<std::size_t>(i)];
}

}  // namespace

void complete_request(State& s, MPI_Request handle, const MPI_Status* status, bool by_test, const void* claim) {
  const auto* c = static_cast<const Claim*>(claim);
  if (c != nullptr && !c->found) return;  // untracked
  SharedGuard guard;
  RequestInfo* live = s.requests.find(handle);
  if (c != nullptr && live != nullptr && live->id != c->info.id) live = nullptr;  // (the handle is another's now)
  if (c == nullptr && live == nullptr) return;  // untracked
  RequestInfo r = live != nullptr ? *live : c->info;
  if (!r.active) return;  // an inactive persistent request
  --s.comms.rec(r.comm).open_requests;
  std::uint8_t flags = by_test ? evflag::kByTest : 0;
  if (r.cancel_requested) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);  // local, reads the status only
    if (cancelled) flags |= evflag::kCancelled;
  }
  if (r.kind == RequestInfo::kColl) {
    record(Event::message(EventKind::CollComplete, raw_now(), r.comm, r.peer, 0, r.bytes, r.id, flags));
  } else if (r.kind == RequestInfo::kSend) {
    record(Event::message(EventKind::SendComplete, raw_now(), r.comm, r.peer, r.tag, r.bytes, r.id, flags));
  } else {
    record(Event::message(EventKind::RecvComplete, raw_now(), r.comm, status->MPI_SOURCE, status->MPI_TAG, 0, r.id,
                          flags));
  }
  if (live == nullptr) return;
  if ((r.flags & evflag::kPersistent) == 0) {
    s.requests.erase(handle);
  } else {
    live->active = false;
    live->cancel_requested = false;
  }
}

namespace {

const MPI_Request* save_requests(const MPI_Request* reqs, int n) {
  thread_local std::vector<MPI_Request> saved;
  if (n <= 0) {
    claim(nullptr, 0);
    return nullptr;
  }
  saved.assign(reqs, reqs + n);
  claim(saved.data(), n);
  return saved.data();
}

// The state if the completed requests are to be recorded (any thread may
// complete any thread's requests: the table is shared).
State* analyzed(int rc) {
  State* s = state();
  return rc == MPI_SUCCESS ? s : nullptr;
}

}  // namespace

namespace hooks {

void pre_wait(Call& c) {
  call_enter(c);
  c.saved_request = *c.request;
  claim(&c.saved_request, 1);
}
void post_wait(Call& c, int rc) {
  if (State* s = analyzed(rc)) complete_request(*s, c.saved_request, c.status, false, claim_of(0));
  call_leave();
}

void pre_test(Call& c) {
  poll_begin(c);
  c.saved_request = *c.request;
  claim(&c.saved_request, 1);
}
void post_test(Call& c, int rc) {
  if (rc == MPI_SUCCESS && !*c.flag) return poll_nothing(c);
  poll_found(c);
  if (State* s = analyzed(rc); s != nullptr && *c.flag) {
    complete_request(*s, c.saved_request, c.status, true, claim_of(0));
  }
  call_leave();
}

void pre_waitany(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitany(Call& c, int rc) {
  if (State* s = analyzed(rc); s != nullptr && *c.index != MPI_UNDEFINED && *c.index >= 0 && *c.index < c.n) {
    complete_request(*s, c.saved_requests[*c.index], c.status, false, claim_of(*c.index));
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
  if (State* s = analyzed(rc);
      s != nullptr && *c.flag && *c.index != MPI_UNDEFINED && *c.index >= 0 && *c.index < c.n) {
    complete_request(*s, c.saved_requests[*c.index], c.status, true, claim_of(*c.index));
  }
  call_leave();
}

void pre_waitall(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitall(Call& c, int rc) {
  if (State* s = analyzed(rc)) {
    for (int i = 0; i < c.n; ++i) complete_request(*s, c.saved_requests[i], &c.statuses[i], false, claim_of(i));
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
  if (State* s = analyzed(rc); s != nullptr && *c.flag) {
    for (int i = 0; i < c.n; ++i) complete_request(*s, c.saved_requests[i], &c.statuses[i], true, claim_of(i));
  }
  call_leave();
}

void pre_waitsome(Call& c) {
  call_enter(c);
  c.saved_requests = save_requests(c.requests, c.n);
}
void post_waitsome(Call& c, int rc) {
  if (State* s = analyzed(rc); s != nullptr && *c.outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *c.outcount; ++k) {
      const int i = c.indices[k];
      if (i >= 0 && i < c.n) complete_request(*s, c.saved_requests[i], &c.statuses[k], false, claim_of(i));
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
  if (State* s = analyzed(rc); s != nullptr && *c.outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *c.outcount; ++k) {
      const int i = c.indices[k];
      if (i >= 0 && i < c.n) complete_request(*s, c.saved_requests[i], &c.statuses[k], true, claim_of(i));
    }
  }
  call_leave();
}

}  // namespace hooks
}  // namespace onlinews::rt
