// Counterpart of the generated mpi_wrappers.gen.cpp: same shape, the PMPI call
// replaced by nothing.
#include "hooks.hpp"
#include "probe.h"

namespace onlinews::rt::probe_hooks {
void pre_plain(Call& c);
void post_plain(Call& c, int rc);
void pre_send(Call& c);
void post_send(Call& c, int rc);
}  // namespace onlinews::rt::probe_hooks

extern "C" void onlinews_probe_plain_call(void) {
  if (!::onlinews::rt::recording()) return;
  ::onlinews::rt::Call c(::onlinews::rt::kRegion_MPI_Iprobe);
  c.comm = MPI_COMM_WORLD;
  ::onlinews::rt::probe_hooks::pre_plain(c);
  const int rc = MPI_SUCCESS;  // PMPI_Iprobe(...) would run here
  ::onlinews::rt::probe_hooks::post_plain(c, rc);
}

extern "C" void onlinews_probe_send_call(int dest, int tag, int count) {
  if (!::onlinews::rt::recording()) return;
  ::onlinews::rt::Call c(::onlinews::rt::kRegion_MPI_Send);
  c.count = count;
  c.type = MPI_BYTE;
  c.peer = dest;
  c.tag = tag;
  c.comm = MPI_COMM_WORLD;
  ::onlinews::rt::probe_hooks::pre_send(c);
  const int rc = MPI_SUCCESS;  // PMPI_Send(...) would run here
  ::onlinews::rt::probe_hooks::post_send(c, rc);
}
