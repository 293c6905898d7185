// onlinews-config --check, second half: can the HDF5 output module be
// loaded?  The runtime loads libonlinews_io.so with dlopen on the ranks
// that write (io/module.cpp) and, when it cannot, runs on without a file.
// A user should learn that before a long job, not from its last line.
#include "module_check.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

namespace onlinews::tools {
namespace {

std::string directory_of(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

std::string real(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

// Where the library and its module are: the build tree's library directory
// for the tool in the build tree, else the install's library directory,
// relative to the one the tool is in ("" if /proc cannot tell).
std::string library_directory() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  const std::string dir = directory_of(exe);
  if (dir == real(ONLINEWS_BUILD_TOOLDIR)) return ONLINEWS_BUILD_LIBDIR;
  return real(dir + "/" ONLINEWS_BIN_TO_LIB);
}

}  // namespace

bool check_module(std::string& report) {
  const std::string dir = library_directory();
  if (dir.empty()) {
    report = "cannot tell where onlinews-config runs from (/proc/self/exe), so not where the library is";
    return false;
  }
  const std::string library = dir + "/libonlinews.so", module = dir + "/libonlinews_io.so";
  if (access(library.c_str(), R_OK) != 0) {
    report = "no libonlinews.so in " + dir + " (is onlinews installed there?)";
    return false;
  }
  // As the runtime does.  No dlclose: H5get_libversion starts HDF5, which
  // registers an atexit handler inside libhdf5, so libhdf5 must stay mapped.
  void* h = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* why = dlerror();
    report = "the HDF5 output module cannot be loaded: runs would write no file (" +
             std::string(why != nullptr ? why : module) + ")";
    return false;
  }
  using Entry = const void* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(h, "onlinews_io_module"));
  const void* api = entry != nullptr ? entry() : nullptr;
  // ModuleApi's first member is its build id (io/module.hpp).
  const char* id = api != nullptr ? *static_cast<const char* const*>(api) : nullptr;
  if (id == nullptr) {
    report = module + " is not onlinews' module (no onlinews_io_module entry)";
  } else if (std::strcmp(id, ONLINEWS_IO_BUILD_ID) != 0) {
    report = module + " belongs to another onlinews build than this tool (reinstall both)";
    id = nullptr;
  } else {
    unsigned major = 0, minor = 0, release = 0;
    using Version = int (*)(unsigned*, unsigned*, unsigned*);
    if (auto v = reinterpret_cast<Version>(dlsym(h, "H5get_libversion")); v != nullptr) v(&major, &minor, &release);
    report = "HDF5 output module OK: " + module + " (HDF5 " + std::to_string(major) + "." + std::to_string(minor) +
             "." + std::to_string(release) + ")";
  }
  return id != nullptr;
}

}  // namespace onlinews::tools
