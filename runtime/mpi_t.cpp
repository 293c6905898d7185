// Eager limits: a standard-mode send larger than the limit uses a
// rendezvous protocol and synchronizes with its receive (docs/analyses.md,
// "Late Receiver").
//
// Start-up must stay within a few milliseconds (issue 7), and
// MPI_T_init_thread alone costs ~0.2 s in Open MPI 4.1 because it registers
// every framework's variables.  So the limits are looked up by name only:
//   1. Open MPI: its MCA variable registry (mca_base_var_find/get_value in
//      libopen-pal), found with dlsym so that nothing links against it.
//      The BTLs in use are already registered by MPI_Init; ~40 us.
//   2. otherwise MPI_T, with MPI_T_cvar_get_index (MPI 3.1) for each name
//      instead of walking every control variable.
#include <mpi.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "inline_analysis/definitions.hpp"
#include "mpi_t_pvars.hpp"

namespace onlinews::rt {
namespace {

struct Candidate {
  const char* component;  // Open MPI BTL component, or nullptr
  const char* cvar;       // MPI_T control variable name
};

// Shared-memory (same host) and network limits, most specific first.
const Candidate kLocal[] = {{"vader", "btl_vader_eager_limit"},
                            {"sm", "btl_sm_eager_limit"},
                            {nullptr, "MPIR_CVAR_CH4_SHM_POSIX_EAGER_MAX_MSG_SIZE"},
                            {nullptr, "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"}};
const Candidate kRemote[] = {{"tcp", "btl_tcp_eager_limit"},
                             {"openib", "btl_openib_eager_limit"},
                             {"uct", "btl_uct_eager_limit"},
                             {"ofi", "btl_ofi_eager_limit"},
                             {nullptr, "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE"},
                             {nullptr, "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"}};

// A limit above 2 GiB is not a plausible eager limit: treat it as a misread.
bool plausible(std::uint64_t v) { return v > 0 && v < (std::uint64_t{1} << 31); }

// Open MPI's registry: mca_base_var_find(project, framework, component,
// variable) gives an index; mca_base_var_get_value stores a pointer to the
// variable's storage (btl eager limits are size_t in Open MPI 4 and 5).
class OpalRegistry {
 public:
  OpalRegistry() {
    find_ = reinterpret_cast<Find>(dlsym(RTLD_DEFAULT, "mca_base_var_find"));
    get_ = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "mca_base_var_get_value"));
  }
  bool available() const { return find_ != nullptr && get_ != nullptr; }
  bool read(const char* component, std::uint64_t& out) const {
    if (!available() || component == nullptr) return false;
    const int index = find_("opal", "btl", component, "eager_limit");
    if (index < 0) return false;
    const std::size_t* value = nullptr;
    if (get_(index, &value, nullptr, nullptr) != 0 || value == nullptr || !plausible(*value)) return false;
    out = *value;
    return true;
  }

 private:
  using Find = int (*)(const char*, const char*, const char*, const char*);
  using Get = int (*)(int, const void*, void*, const char**);
  Find find_ = nullptr;
  Get get_ = nullptr;
};

bool read_cvar(int index, std::uint64_t& out) {
  char name[256], desc[16];
  int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum en;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind, &scope) !=
      MPI_SUCCESS) {
    return false;
  }
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
  return ok && plausible(out);
}

// The first candidate either source knows; `name` says where it came from.
template <std::size_t N>
bool lookup(const Candidate (&list)[N], const OpalRegistry& opal, bool mpi_t, std::uint64_t& out,
            std::string& name) {
  for (const Candidate& c : list) {
    std::uint64_t v = 0;
    if (opal.read(c.component, v)) {
      out = v;
      name = std::string("btl_") + c.component + "_eager_limit";
      return true;
    }
    int index = -1;
    if (mpi_t && MPI_T_cvar_get_index(c.cvar, &index) == MPI_SUCCESS && read_cvar(index, v)) {
      out = v;
      name = c.cvar;
      return true;
    }
  }
  return false;
}

}  // namespace

// Fills the eager limits of `defs`; keeps the defaults for what the library
// does not expose.  Returns a description for the log.
//
// `thread_level` must be the level MPI_Init_thread provided: Open MPI's
// MPI_T_init_thread re-applies the level it is given to the whole library,
// so asking for MPI_THREAD_SINGLE in a MPI_THREAD_MULTIPLE program turns
// off Open MPI's locking and lets concurrent threads receive each other's
// messages (a hang or a corrupted status).
std::string read_eager_limits(analysis::Definitions& defs, int thread_level) {
  const OpalRegistry opal;
  const bool mpi_t = !opal.available() && mpi_t_open(thread_level);
  std::string local_name = "default", remote_name = "default";
  lookup(kLocal, opal, mpi_t, defs.eager_limit_local, local_name);
  lookup(kRemote, opal, mpi_t, defs.eager_limit_remote, remote_name);
  return "same host " + std::to_string(defs.eager_limit_local) + " B (" + local_name + "), other hosts " +
         std::to_string(defs.eager_limit_remote) + " B (" + remote_name + ")";
}

}  // namespace onlinews::rt
