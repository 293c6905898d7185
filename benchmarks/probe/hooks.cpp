// Counterpart of runtime/hooks_comm.cpp (plain hook) and of the recording part
// of runtime/hooks_p2p.cpp (send hook), in their own translation unit.
#include "hooks.hpp"

namespace onlinews::rt::probe_hooks {

void pre_plain(Call& c) { call_enter(c); }
void post_plain(Call&, int) { call_leave(); }

// hooks::pre_send/post_send without resolve_comm() (a hash lookup) and
// type_bytes() (PMPI_Type_size): only what recording costs.
void pre_send(Call& c) {
  call_enter(c);
  c.comm_id = 0;
  c.comm_ok = true;
}
void post_send(Call& c, int rc) {
  if (rc == MPI_SUCCESS && c.comm_ok && c.peer != MPI_PROC_NULL) {
    record(Event::message(EventKind::Send, c.t_enter, c.comm_id, c.peer, c.tag,
                          static_cast<std::uint64_t>(c.count) * 8u, 0, c.mode));
  }
  call_leave();
}

}  // namespace onlinews::rt::probe_hooks
