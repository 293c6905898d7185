// The module's entry (module.hpp): everything here runs with HDF5 loaded.
#include <hdf5.h>

#include "h5_file.hpp"
#include "module.hpp"

namespace onlinews::io {
namespace {

H5Output* new_file() { return new H5File(); }

const ModuleApi g_api = [] {
  ModuleApi api;
  api.new_output = &new_file;
  api.write_matrices = &write_matrices;
  api.write_parallel = &write_parallel;
  api.hdf5_function = reinterpret_cast<const void*>(&H5open);
  return api;
}();

}  // namespace
}  // namespace onlinews::io

extern "C" __attribute__((visibility("default"))) const onlinews::io::ModuleApi* onlinews_io_module() {
  return &onlinews::io::g_api;
}
