// Helpers shared by the hook files (internal to runtime/).
#pragma once
#include "hooks.hpp"
#include "state.hpp"

namespace onlinews::rt {

// Looks up the call's communicator.  False (and the call is recorded as time
// only) when the communicator is not tracked or the call comes from a thread
// other than the one whose MPI calls are analyzed.
inline bool resolve_comm(Call& c) {
  State* s = state();
  c.comm_ok = false;
  if (s == nullptr) return false;
  if (!on_mpi_thread()) {
    ++s->unsupported_calls;
    if (!s->warned_threads) {
      s->warned_threads = true;
      log_warning("MPI calls from more than one thread: only the thread that initialized MPI is analyzed; "
                  "calls from other threads count as time only (counted in the output)",
                  false);
    }
    return false;
  }
  const int id = s->comms.lookup(c.comm);
  if (id == kUnknownComm) {
    ++s->unsupported_calls;
    return false;
  }
  c.comm_id = static_cast<std::uint16_t>(id);
  c.comm_ok = true;
  return true;
}

inline std::uint64_t type_bytes(int count, MPI_Datatype t) {
  if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(t, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size > 0 ? size : 0);
}

inline std::int32_t norm_source(int src) { return src == MPI_ANY_SOURCE ? kAnySource : src; }
inline std::int32_t norm_tag(int tag) { return tag == MPI_ANY_TAG ? kAnyTag : tag; }

inline std::uint64_t message_key(MPI_Message m) {
  std::uint64_t k = 0;
  __builtin_memcpy(&k, &m, sizeof m < sizeof k ? sizeof m : sizeof k);
  return k;
}

// Records the completion of one tracked request (Wait*/Test* and friends).
void complete_request(State& s, MPI_Request handle, const MPI_Status* status, bool by_test);

}  // namespace onlinews::rt
