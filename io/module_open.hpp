// Opening libonlinews_io.so by its full path (internal to io/), without MPI
// or HDF5 headers: the runtime's loader (module.cpp) and onlinews-config
// --check (tools/module_check.cpp) open it the same way.
#pragma once
#include <string>

namespace onlinews::io {

std::string directory_of(const std::string& file);
// realpath(3) of `path`, or `path` itself if it cannot be resolved.
std::string resolved(const std::string& path);

// dlopen(path) as the runtime does (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE:
// what it made lives until exit), its entry onlinews_io_module(), and that
// entry's build id (ModuleApi's first member, io/module.hpp) against
// `build_id`.  Returns the entry's ModuleApi, or nullptr with `why`;
// `handle` is set once dlopen succeeded (a file that loads but is not this
// build's module: no other candidate is tried).
const void* open_module(const std::string& path, const char* build_id, void*& handle, std::string& why);

}  // namespace onlinews::io
