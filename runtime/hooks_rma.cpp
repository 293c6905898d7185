// Hooks of MPI one-sided communication (RMA).  A window is registered as a
// communicator of its own (comms.hpp) when it is created; its creation,
// MPI_Win_free and MPI_Win_fence record a CollectiveEnd on it, like the
// collectives of hooks_coll.cpp, and an RMA operation records its target and
// bytes.  Post, start, complete and wait/test record their window, post and
// start also their group (interned in Definitions::groups); locks, unlocks
// and flushes their target (-1: all members) and lock type.  Local flushes
// and MPI_Win_sync are time.  A call MPI rejects is counted, as for every RMA
// synchronization call.
#include "hooks_common.hpp"

namespace onlinews::rt {
namespace {

// An RMA synchronization call that MPI rejected (an unlock without a lock, a
// complete without a start, ... under MPI_ERRORS_RETURN): left out of the
// analysis, counted, and reported once.
void rejected(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS || s == nullptr || !on_analyzed_thread()) return;
  ++s->rma_rejected;
  if (!s->warned_rma_rejected) {
    s->warned_rma_rejected = true;
    const auto* r = s->defs.region(c.region);
    log_warning(std::string("MPI rejected ") + (r != nullptr ? r->name : "an RMA synchronization call") +
                    " (erroneous RMA synchronization?); the RMA analysis leaves such calls out "
                    "(counted in rma_sync_errors)",
                false);
  }
}

// A collective instance on the window, then the call's Leave, at one time.
void window_collective_end(Call& c, int rc, std::uint8_t flags = 0) {
  const std::uint64_t t = raw_now();
  rejected(c, rc);
  if (rc == MPI_SUCCESS && c.comm_ok) {
    Event e = Event::collective_end(t, c.comm_id, -1, 0, 0);
    e.flags = flags;
    record(e);
  }
  call_leave(t);
}

// The id of `g` as ranks in the window's communicator (the window's group has
// the same order).  Allocates only for a group not seen before.
std::uint32_t intern_group(State& s, MPI_Group g, MPI_Win w) {
  thread_local std::vector<int> in, out;
  MPI_Group wg = MPI_GROUP_NULL;
  int n = 0;
  PMPI_Group_size(g, &n);
  PMPI_Win_get_group(w, &wg);
  in.resize(static_cast<std::size_t>(n));
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(g, n, in.data(), wg, out.data());
  PMPI_Group_free(&wg);
  auto it = s.group_ids.find(out);
  if (it != s.group_ids.end()) return it->second;
  SharedGuard guard;
  const auto id = static_cast<std::uint32_t>(s.defs.groups.size());
  s.defs.groups.push_back(out);
  s.group_ids.emplace(out, id);
  return id;
}

}  // namespace

namespace hooks {

void pre_win_create(Call& c) { call_enter(c); }

// The window is registered after the application's call returned (the
// registration's own collectives must not hide the wait at create), and its
// CollectiveEnd and Leave carry the time the call returned; the registration
// follows as set-up time.
void post_win_create(Call& c, int rc) {
  const std::uint64_t t = raw_now();
  State* s = state();
  const bool created = rc == MPI_SUCCESS && s != nullptr && c.newwin != nullptr && *c.newwin != MPI_WIN_NULL;
  if (!created || !resolve_comm(c, true)) {  // (another thread under MULTIPLE: time only)
    call_leave(t);
    return;
  }
  int id = kUnknownComm;
  {
    ToolScope tool;
    id = s->comms.add_window(*c.newwin, c.comm, s->cuts->known());
  }
  if (id != kUnknownComm) record(Event::collective_end(t, static_cast<std::uint16_t>(id), -1, 0, 0));
  call_leave(t);
  record_enter(t, tool_region_setup());
  record_leave(raw_now());
}

void pre_win_free(Call& c) {
  call_enter(c);
  c.win = c.win_inout != nullptr ? *c.win_inout : MPI_WIN_NULL;
  resolve_window(c, c.win, true);
}
void post_win_free(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && s != nullptr && c.comm_ok) {
    const std::uint64_t when = s->clock_sync.to_global(monotonic_ns());
    SharedGuard guard;
    s->comms.mark_window_freed(c.win, when);
  }
  window_collective_end(c, rc);
}

void pre_rma_coll(Call& c) {
  call_enter(c);
  resolve_window(c, c.win, true);
}
void post_rma_coll(Call& c, int rc) {
  window_collective_end(c, rc, (c.rma_assert & MPI_MODE_NOPRECEDE) != 0 ? evflag::kNoPrecede : 0);
}

void pre_rma_op(Call& c) {
  call_enter(c);
  resolve_window(c, c.win, false);
}
void post_rma_op(Call& c, int rc) {
  const std::uint64_t t = raw_now();
  if (rc == MPI_SUCCESS && c.comm_ok && c.peer != MPI_PROC_NULL) {
    EventKind k = EventKind::RmaAtomic;
    std::uint64_t out = 0, in = 0;
    switch (c.rma) {
      case RmaRule::Put: k = EventKind::RmaPut; out = type_bytes(c.count, c.type); break;
      case RmaRule::Get: k = EventKind::RmaGet; in = type_bytes(c.rcount, c.rtype); break;
      case RmaRule::Atomic: out = type_bytes(c.count, c.type); in = type_bytes(c.rcount, c.rtype); break;
      case RmaRule::Atomic1: out = in = type_bytes(1, c.type); break;
      default: break;  // (synchronization rules: rma_sync)
    }
    record(Event::rma(k, t, c.comm_id, c.peer, out, in));
  }
  call_leave(t);
}

void pre_rma_sync(Call& c) {
  call_enter(c);
  resolve_window(c, c.win, false);
}
void post_rma_sync(Call& c, int rc) {
  const std::uint64_t t = raw_now();
  rejected(c, rc);
  State* s = state();
  // (A lock, unlock or flush of MPI_PROC_NULL does nothing.)
  const bool targeted = c.rma == RmaRule::Lock || c.rma == RmaRule::Unlock || c.rma == RmaRule::Flush;
  if (rc == MPI_SUCCESS && c.comm_ok && s != nullptr && !(targeted && c.peer == MPI_PROC_NULL)) {
    switch (c.rma) {
      case RmaRule::Post:
      case RmaRule::Start:
        if (c.rma_group != MPI_GROUP_NULL) {
          const bool post = c.rma == RmaRule::Post;
          record(Event::rma_sync(post ? EventKind::WinPost : EventKind::WinStart, post ? c.t_enter : t, c.comm_id,
                                 intern_group(*s, c.rma_group, c.win)));
        }
        break;
      case RmaRule::Complete:
        record(Event::rma_sync(EventKind::WinComplete, t, c.comm_id));
        break;
      case RmaRule::Test:
        if (c.flag == nullptr || *c.flag == 0) break;
        [[fallthrough]];
      case RmaRule::Wait:
        record(Event::rma_sync(EventKind::WinWait, t, c.comm_id));
        break;
      case RmaRule::Lock:
      case RmaRule::LockAll: {
        const bool all = c.rma == RmaRule::LockAll;
        const bool exclusive = !all && c.lock_type == MPI_LOCK_EXCLUSIVE;
        record(Event::rma_sync(EventKind::WinLock, t, c.comm_id, 0, all ? -1 : c.peer,
                               exclusive ? evflag::kExclusiveLock : 0));
        break;
      }
      case RmaRule::Unlock:
      case RmaRule::UnlockAll:
        record(Event::rma_sync(EventKind::WinUnlock, t, c.comm_id, 0, c.rma == RmaRule::UnlockAll ? -1 : c.peer));
        break;
      case RmaRule::Flush:
      case RmaRule::FlushAll:
        record(Event::rma_sync(EventKind::WinFlush, t, c.comm_id, 0, c.rma == RmaRule::FlushAll ? -1 : c.peer));
        break;
      default:
        break;
    }
  }
  call_leave(t);
}

}  // namespace hooks
}  // namespace onlinews::rt
