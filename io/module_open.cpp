#include "module_open.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>

namespace onlinews::io {

std::string directory_of(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

const void* open_module(const std::string& path, const char* build_id, void*& handle, std::string& why) {
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* e = dlerror();
    why = "cannot load '" + path + "': " + (e != nullptr ? e : "unknown error");
    return nullptr;
  }
  using Entry = const void* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "onlinews_io_module"));
  const void* api = entry != nullptr ? entry() : nullptr;
  const char* id = api != nullptr ? *static_cast<const char* const*>(api) : nullptr;
  if (id == nullptr) {
    why = "'" + path + "' is not onlinews' module (no onlinews_io_module entry)";
    return nullptr;
  }
  if (std::strcmp(id, build_id) != 0) {
    why = "'" + path + "' belongs to another onlinews build (reinstall both libraries)";
    return nullptr;
  }
  return api;
}

}  // namespace onlinews::io
