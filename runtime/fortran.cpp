#include "fortran.hpp"

#if ONLINEWS_FORTRAN_WRAPPERS
#include <dlfcn.h>

#include <cctype>
#include <cstdint>
#include <string>

#include "runtime.hpp"

namespace onlinews::rt::fortran {
namespace {

// A Fortran constant's address, as the dynamic linker resolved it (the
// common block is defined by several Open MPI libraries and the program;
// one definition wins), under any of the compilers' spellings.
void* common_block(const char* name) {
  const std::string n = name;
  std::string upper = n;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const std::string& s : {n + "_", n, n + "__", upper}) {
    if (void* p = dlsym(RTLD_DEFAULT, s.c_str())) return p;
  }
  return nullptr;
}

// Looked up at the first use.
struct Sentinels {
  void* bottom = common_block("mpi_fortran_bottom");
  void* in_place = common_block("mpi_fortran_in_place");
  void* status_ignore = common_block("mpi_fortran_status_ignore");
  void* statuses_ignore = common_block("mpi_fortran_statuses_ignore");
};
const Sentinels& sentinels() {
  static const Sentinels s;
  return s;
}

}  // namespace

void* buf(void* p) {
  if (p == nullptr) return p;
  const Sentinels& s = sentinels();
  if (p == s.bottom) return MPI_BOTTOM;
  if (p == s.in_place) return MPI_IN_PLACE;
  return p;
}

void indices_out(MPI_Fint* indices, int outcount) {
  for (int i = 0; i < outcount; ++i) indices[i] += 1;  // (MPI_UNDEFINED is negative: nothing)
}

bool status_ignored(const MPI_Fint* f) {
  return f == nullptr || f == sentinels().status_ignore || f == MPI_F_STATUS_IGNORE;
}
bool statuses_ignored(const MPI_Fint* f) {
  return f == nullptr || f == sentinels().statuses_ignore || f == MPI_F_STATUSES_IGNORE;
}

bool entries_bypassed() {
  // (Ours lie in this library's text, as this function does.)
  void* resolved = dlsym(RTLD_DEFAULT, "mpi_send_");
  return resolved != nullptr &&
         !text_range_of(reinterpret_cast<const void*>(&entries_bypassed)).contains(reinterpret_cast<std::uintptr_t>(resolved));
}

}  // namespace onlinews::rt::fortran
#else
namespace onlinews::rt::fortran {
bool entries_bypassed() { return false; }
}  // namespace onlinews::rt::fortran
#endif  // ONLINEWS_FORTRAN_WRAPPERS
