#include "fortran.hpp"

#if ONLINEWS_FORTRAN_WRAPPERS
#include <dlfcn.h>

#include <vector>

namespace onlinews::rt::fortran {
namespace {

// The Fortran constants' addresses, as the dynamic linker resolved them
// (the common blocks are defined by several Open MPI libraries and the
// program; one definition wins).  Looked up at the first use.
struct Sentinels {
  void* bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
  void* in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
  void* status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
  void* statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
};
const Sentinels& sentinels() {
  static const Sentinels s;
  return s;
}

bool ignored(const MPI_Fint* f, void* common, const MPI_Fint* c_constant) {
  return f == nullptr || f == common || f == c_constant;
}

// Fortran's MPI_STATUS_SIZE (MPI-4 names it in C; Open MPI 4 derives it
// from the C status so).
#ifdef MPI_F_STATUS_SIZE
constexpr int kStatusSize = MPI_F_STATUS_SIZE;
#else
constexpr int kStatusSize = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
#endif

thread_local std::vector<MPI_Request> t_requests;
thread_local std::vector<MPI_Status> t_statuses;

}  // namespace

void* buf(void* p) {
  if (p == nullptr) return p;
  const Sentinels& s = sentinels();
  if (p == s.bottom) return MPI_BOTTOM;
  if (p == s.in_place) return MPI_IN_PLACE;
  return p;
}

void indices_out(MPI_Fint* indices, int outcount) {
  if (outcount == MPI_UNDEFINED) return;
  for (int i = 0; i < outcount; ++i) indices[i] += 1;
}

void status_out(MPI_Fint* f, const MPI_Status* c) {
  if (ignored(f, sentinels().status_ignore, MPI_F_STATUS_IGNORE)) return;
  PMPI_Status_c2f(c, f);
}

MPI_Request* requests_in(const MPI_Fint* f, int n) {
  if (n <= 0) return nullptr;
  t_requests.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) t_requests[static_cast<std::size_t>(i)] = PMPI_Request_f2c(f[i]);
  return t_requests.data();
}

void requests_out(MPI_Fint* f, int n) {
  for (int i = 0; i < n; ++i) f[i] = PMPI_Request_c2f(t_requests[static_cast<std::size_t>(i)]);
}

MPI_Status* statuses_in(MPI_Fint* f, int n) {
  if (ignored(f, sentinels().statuses_ignore, MPI_F_STATUSES_IGNORE)) return MPI_STATUSES_IGNORE;
  t_statuses.resize(static_cast<std::size_t>(n > 0 ? n : 1));
  return t_statuses.data();
}

void statuses_out(MPI_Fint* f, int n) {
  if (ignored(f, sentinels().statuses_ignore, MPI_F_STATUSES_IGNORE)) return;
  for (int i = 0; i < n; ++i) PMPI_Status_c2f(&t_statuses[static_cast<std::size_t>(i)], f + i * kStatusSize);
}

}  // namespace onlinews::rt::fortran
#endif  // ONLINEWS_FORTRAN_WRAPPERS
