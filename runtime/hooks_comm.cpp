// Hooks of communicator management (the tool duplicates every new
// communicator, outside the application's call and timed as onlinews
// overhead) and of calls recorded as time only.
#include "hooks_common.hpp"
#include "output_grid.hpp"

namespace onlinews::rt::hooks {

void pre_comm_new(Call& c) { call_enter(c); }

void post_comm_new(Call& c, int rc) {
  call_leave();
  State* s = state();
  if (rc != MPI_SUCCESS || s == nullptr || c.newcomm == nullptr || *c.newcomm == MPI_COMM_NULL) return;
  if (!on_analyzed_thread()) {  // untracked: its calls are time only
    count_time_only_call();
    return;
  }
  record_enter(raw_now(), tool_region_setup());
  {
    ToolScope tool;
    const int id = s->comms.add(*c.newcomm, s->cuts->known());
    if (id != kUnknownComm) {
      s->comms.note_neighbors(*c.newcomm, id);
      note_topology(*s, *c.newcomm, id);  // (its graph neighbors are those just noted)
    }
  }
  record_leave(raw_now());
}

void pre_comm_free(Call& c) {
  call_enter(c);
  c.comm = *c.comm_inout;
}
void post_comm_free(Call& c, int rc) {
  State* s = state();
  if (rc == MPI_SUCCESS && s != nullptr) {
    const std::uint64_t when = s->clock_sync.to_global(monotonic_ns());
    SharedGuard guard;
    s->comms.mark_freed(c.comm, when);
  }
  call_leave();
}

void pre_plain(Call& c) { call_enter(c); }
void post_plain(Call&, int) { call_leave(); }

}  // namespace onlinews::rt::hooks
