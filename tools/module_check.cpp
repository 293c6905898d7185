// onlinews-config --check, second half: can the HDF5 output module be
// loaded?  The runtime loads libonlinews_io.so with dlopen on the ranks
// that write (io/module.cpp) and, when it cannot, runs on without a file.
// A user should learn that before a long job, not from its last line.
#include "module_check.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include "io/module_open.hpp"

namespace onlinews::tools {
namespace {

// Where the library and its module are: the build tree's library directory
// for the tool in the build tree, else the install's library directory,
// relative to the one the tool is in ("" if /proc cannot tell).
std::string library_directory() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  const std::string dir = io::directory_of(exe);
  if (dir == io::resolved(ONLINEWS_BUILD_TOOLDIR)) return ONLINEWS_BUILD_LIBDIR;
  return io::resolved(dir + "/" ONLINEWS_BIN_TO_LIB);
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
  // No dlclose: H5get_libversion starts HDF5, which registers an atexit
  // handler inside libhdf5, so libhdf5 must stay mapped.
  void* h = nullptr;
  std::string why;
  if (io::open_module(module, ONLINEWS_IO_BUILD_ID, h, why) == nullptr) {
    report = "the HDF5 output module cannot be loaded: runs would write no file (" + why + ")";
    return false;
  }
  unsigned major = 0, minor = 0, release = 0;
  using Version = int (*)(unsigned*, unsigned*, unsigned*);
  if (auto v = reinterpret_cast<Version>(dlsym(h, "H5get_libversion")); v != nullptr) v(&major, &minor, &release);
  report = "HDF5 output module OK: " + module + " (HDF5 " + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(release) + ")";
  return true;
}

}  // namespace onlinews::tools
