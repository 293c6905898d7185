// Eager limits through the MPI tool information interface (MPI_T): a
// standard-mode send larger than the limit uses a rendezvous protocol and
// synchronizes with its receive (docs/analyses.md, "Late Receiver").
#include <mpi.h>

#include <cstring>
#include <string>

#include "inline_analysis/definitions.hpp"

namespace onlinews::rt {
namespace {

// Shared-memory (same host) and network limits, most specific first.
const char* const kLocalNames[] = {"btl_vader_eager_limit", "btl_sm_eager_limit",
                                   "MPIR_CVAR_CH4_SHM_POSIX_EAGER_MAX_MSG_SIZE",
                                   "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"};
const char* const kRemoteNames[] = {"btl_tcp_eager_limit", "btl_openib_eager_limit", "btl_uct_eager_limit",
                                    "btl_ofi_eager_limit", "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE",
                                    "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"};

bool read_cvar(int index, MPI_Datatype type, std::uint64_t& out) {
  MPI_T_cvar_handle h;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) return false;
  bool ok = count == 1;
  if (ok) {
    if (type == MPI_INT) {
      int v = 0;
      ok = MPI_T_cvar_read(h, &v) == MPI_SUCCESS && v >= 0;
      out = static_cast<std::uint64_t>(v);
    } else if (type == MPI_UNSIGNED) {
      unsigned v = 0;
      ok = MPI_T_cvar_read(h, &v) == MPI_SUCCESS;
      out = v;
    } else if (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG || type == MPI_LONG_LONG ||
               type == MPI_COUNT) {
      unsigned long long v = 0;
      ok = MPI_T_cvar_read(h, &v) == MPI_SUCCESS;
      out = v;
    } else {
      ok = false;
    }
  }
  MPI_T_cvar_handle_free(&h);
  return ok;
}

}  // namespace

// Fills the eager limits of `defs` from MPI_T; keeps the defaults for what
// the library does not expose.  Returns a description for the log.
//
// `thread_level` must be the level MPI_Init_thread provided: Open MPI's
// MPI_T_init_thread re-applies the level it is given to the whole library,
// so asking for MPI_THREAD_SINGLE in a MPI_THREAD_MULTIPLE program turns
// off Open MPI's locking and lets concurrent threads receive each other's
// messages (a hang or a corrupted status).
std::string read_eager_limits(analysis::Definitions& defs, int thread_level) {
  int provided = 0;
  if (MPI_T_init_thread(thread_level, &provided) != MPI_SUCCESS) return "defaults (MPI_T unavailable)";
  int n = 0;
  MPI_T_cvar_get_num(&n);
  int local_rank = 99, remote_rank = 99;
  std::string local_name = "default", remote_name = "default";
  for (int i = 0; i < n; ++i) {
    char name[256], desc[16];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind, &scope) !=
        MPI_SUCCESS) {
      continue;
    }
    for (int k = 0; k < static_cast<int>(sizeof kLocalNames / sizeof *kLocalNames); ++k) {
      std::uint64_t v = 0;
      if (k < local_rank && std::strcmp(name, kLocalNames[k]) == 0 && read_cvar(i, type, v)) {
        defs.eager_limit_local = v;
        local_rank = k;
        local_name = name;
      }
    }
    for (int k = 0; k < static_cast<int>(sizeof kRemoteNames / sizeof *kRemoteNames); ++k) {
      std::uint64_t v = 0;
      if (k < remote_rank && std::strcmp(name, kRemoteNames[k]) == 0 && read_cvar(i, type, v)) {
        defs.eager_limit_remote = v;
        remote_rank = k;
        remote_name = name;
      }
    }
  }
  MPI_T_finalize();
  return "same host " + std::to_string(defs.eager_limit_local) + " B (" + local_name + "), other hosts " +
         std::to_string(defs.eager_limit_remote) + " B (" + remote_name + ")";
}

}  // namespace onlinews::rt
