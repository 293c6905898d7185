// Loading libonlinews_io.so (module.hpp): part of libonlinews, without HDF5.
// The module is looked for next to the library that holds this code (the
// build tree and an install put both in one directory), by its full path:
// neither LD_LIBRARY_PATH nor the application's RUNPATH needs to name it.
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "module.hpp"

namespace onlinews::io {
namespace {

std::once_flag g_once;
std::atomic<const ModuleApi*> g_api{nullptr};  // (read by hdf5_function without the once flag)
std::string g_error;
std::atomic<void (*)()> g_hook{nullptr};

std::string module_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&module_path), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string dir = info.dli_fname;
  const std::size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/libonlinews_io.so";
}

void load() {
  const std::string path = module_path();
  if (path.empty()) {
    g_error = "cannot locate libonlinews (dladdr) to find libonlinews_io.so";
    return;
  }
  // RTLD_NODELETE: objects it made live until exit.  RTLD_LOCAL: its
  // symbols (and HDF5's) do not join the application's namespace.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* why = dlerror();
    g_error = "cannot load '" + path + "': " + (why != nullptr ? why : "unknown error");
    return;
  }
  using Entry = const ModuleApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(h, "onlinews_io_module"));
  const ModuleApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->abi != kModuleAbi) {
    g_error = "'" + path + "' belongs to another onlinews build (reinstall both libraries)";
    return;
  }
  g_api.store(api);
}

}  // namespace

const ModuleApi* module(std::string& error) {
  bool fresh = false;
  std::call_once(g_once, [&] {
    load();
    fresh = true;
  });
  const ModuleApi* api = g_api.load();
  if (api == nullptr) {
    error = g_error;
    return nullptr;
  }
  if (fresh) {
    if (auto* hook = g_hook.load()) hook();
  }
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

void on_module_loaded(void (*hook)()) { g_hook.store(hook); }

}  // namespace onlinews::io
