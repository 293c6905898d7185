// Hooks of communicator management (the tool duplicates every new
// communicator, outside the application's call and timed as onlinews
// overhead) and of calls recorded as time only.
#include "hooks_common.hpp"

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
    if (id != kUnknownComm && c.region == kRegion_MPI_Cart_create && !s->have_topology &&
        s->defs.comms[id].size == s->size && c.ndims > 0 && c.dims != nullptr) {
      s->have_topology = true;
      s->topology.dims.assign(c.dims, c.dims + c.ndims);
      s->topology.periods.assign(static_cast<std::size_t>(c.ndims), 0);
      for (int i = 0; i < c.ndims && c.periods != nullptr; ++i) s->topology.periods[i] = c.periods[i] ? 1 : 0;
      s->my_coords.assign(static_cast<std::size_t>(c.ndims), 0);
      PMPI_Cart_coords(*c.newcomm, s->defs.comms[id].my_rank, c.ndims, s->my_coords.data());
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
