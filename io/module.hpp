// The entry of the module libonlinews_io.so (internal to io/): what the
// runtime reaches of HDF5.  The module holds every HDF5 call; libonlinews
// loads it with dlopen on the ranks that write (module.cpp), so that the
// others never map libhdf5 and its dependency chain (libcurl, gnutls,
// OpenSSL, krb5, ...: ~6 ms and ~470 page faults per process at exec, and
// 2-5 MiB of RSS; benchmarks/README.md).  Both sides come from one build;
// `build_id` (a hash of this header and h5output.hpp, computed by CMake)
// catches a module of another build before a call through a stale vtable.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "h5output.hpp"

namespace onlinews::io {

#ifndef ONLINEWS_IO_BUILD_ID
#error "ONLINEWS_IO_BUILD_ID comes from runtime/CMakeLists.txt"
#endif
constexpr const char* kModuleBuildId = ONLINEWS_IO_BUILD_ID;

struct ModuleApi {
  // First, and stays first: it is read before the rest of the layout is
  // trusted (module.cpp; onlinews-config --check reads only this).
  const char* build_id = kModuleBuildId;
  H5Output* (*new_output)() = nullptr;
  // Rank 0 alone: /profile/<metric> [n_callpaths, n_locations] in the closed
  // file `path`; `matrix(m, out)` fills metric m's whole matrix, row-major.
  bool (*write_matrices)(const std::string& path, const std::vector<MetricDef>& metrics, std::int64_t n_callpaths,
                         std::int64_t n_locations, const std::function<void(int, std::vector<double>&)>& matrix,
                         std::string& error) = nullptr;
  // All ranks of `comm`, collective (parallel HDF5): as write_profile.
  bool (*write_parallel)(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                         std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                         const std::function<void(int, std::vector<double>&)>& fill, std::string& error) = nullptr;
  const void* hdf5_function = nullptr;  // H5open
};

// Loaded at the first call (any thread; later calls return the same);
// nullptr with `error` set if the module or HDF5 cannot be loaded.
const ModuleApi* module(std::string& error);

}  // namespace onlinews::io

// Defined by the module, looked up by dlsym.
extern "C" const onlinews::io::ModuleApi* onlinews_io_module();
