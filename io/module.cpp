// Loading libonlinews_io.so (module.hpp): part of libonlinews, without HDF5.
// The module is looked for next to the library that holds this code (the
// build tree and an install put both in one directory), by its full path:
// neither LD_LIBRARY_PATH nor the application's RUNPATH needs to name it.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "module.hpp"
#include "module_open.hpp"

namespace onlinews::io {
// open_module reads the build id before it trusts the rest of the layout.
static_assert(offsetof(ModuleApi, build_id) == 0, "ModuleApi's build_id stays first");
namespace {

std::once_flag g_once;
std::atomic<const ModuleApi*> g_api{nullptr};  // (read by hdf5_function without the once flag)
std::string g_error;

// Where the module may be: next to libonlinews as the process named it
// (LD_PRELOAD, the linker's path), and next to the file that name resolves
// to (a symlink to libonlinews in another directory).  Taken when the
// library is loaded, before the application can chdir away from a
// relative LD_PRELOAD.
std::vector<std::string> g_candidates;

__attribute__((constructor)) void remember_candidates() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&remember_candidates), &info) == 0 || info.dli_fname == nullptr) return;
  for (const std::string& dir : {directory_of(info.dli_fname), directory_of(resolved(info.dli_fname))}) {
    const std::string path = resolved(dir) + "/libonlinews_io.so";
    if (std::find(g_candidates.begin(), g_candidates.end(), path) == g_candidates.end()) g_candidates.push_back(path);
  }
}

void load() {
  if (g_candidates.empty()) {
    g_error = "cannot locate libonlinews (dladdr) to find libonlinews_io.so";
    return;
  }
  for (const std::string& candidate : g_candidates) {
    void* handle = nullptr;
    std::string why;
    const auto* api = static_cast<const ModuleApi*>(open_module(candidate, kModuleBuildId, handle, why));
    if (api != nullptr) {
      g_error.clear();
      g_api.store(api);
      return;
    }
    if (handle != nullptr) {  // (loaded, but not this build's module)
      g_error = why;
      return;
    }
    g_error += (g_error.empty() ? "" : "; ") + why;
  }
}

}  // namespace

const ModuleApi* module(std::string& error) {
  std::call_once(g_once, load);
  const ModuleApi* api = g_api.load();
  if (api == nullptr) error = g_error;
  return api;
}

std::unique_ptr<H5Output> new_h5output(std::string& error) {
  const ModuleApi* api = module(error);
  return std::unique_ptr<H5Output>(api != nullptr ? api->new_output() : nullptr);
}

bool load_module(std::string& error) { return module(error) != nullptr; }

const void* hdf5_function() {
  if (const ModuleApi* api = g_api.load()) return api->hdf5_function;
  return dlsym(RTLD_DEFAULT, "H5open");
}

}  // namespace onlinews::io
