// Fortran entry points (docs/design.md, "Fortran").  Open MPI's Fortran
// bindings (mpif.h, use mpi, use mpi_f08) call PMPI_* directly, so a
// Fortran call never reaches the C wrappers.  runtime/gen_wrappers.py
// therefore generates, for the spec's functions whose arguments it can
// convert, a Fortran entry point under every name the Fortran compilers
// use (mpi_send_, mpi_send__, mpi_send, MPI_SEND, and mpi_send_f08_ for
// mpi_f08 in Open MPI 4, whose f08 arguments are passed like mpif.h's:
// handles as one integer, buffers by address, ierror optional).  It
// converts the arguments (handles with PMPI_*_f2c/c2f, statuses, logicals,
// 1-based indices, Fortran's MPI_BOTTOM and MPI_IN_PLACE) and runs the same
// body as the C wrapper, with its own return address as the call site.
// MPICH's mpif.h and `use mpi` bindings call the C MPI_* functions: no
// Fortran entry points there (their call sites name the binding;
// docs/output.md); its mpi_f08 binding is redirected (fortran_mpich.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>

#if defined(OPEN_MPI)
#define ONLINEWS_FORTRAN_WRAPPERS 1
// Open MPI 5 passes mpi_f08 buffers as descriptors where the compiler can:
// not verified, so only mpif.h and use mpi there.
#define ONLINEWS_FORTRAN_F08 (OMPI_MAJOR_VERSION < 5)
#else
#define ONLINEWS_FORTRAN_WRAPPERS 0
#define ONLINEWS_FORTRAN_F08 0
#endif

namespace onlinews::rt::fortran {

static_assert(sizeof(MPI_Fint) == sizeof(int), "integer arrays are passed through");

// Fortran's MPI_BOTTOM and MPI_IN_PLACE are addresses of the MPI library's
// common blocks: the C constants instead.
void* buf(void* p);
inline void set_ierr(MPI_Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);  // (optional in mpi_f08)
}
// LOGICAL results: gfortran's .true. is 1 (Open MPI: "Fort logical value true").
inline MPI_Fint logical(int c) { return c != 0 ? 1 : 0; }
// A C index (0-based, or MPI_UNDEFINED) as Fortran's (1-based).
inline MPI_Fint index(int c) { return c == MPI_UNDEFINED ? c : c + 1; }
void indices_out(MPI_Fint* indices, int outcount);
bool status_ignored(const MPI_Fint* f);
bool statuses_ignored(const MPI_Fint* f);
// A Fortran status (array) is the C status's memory (Open MPI defines
// MPI_STATUS_SIZE as its size in integers): passed through, as Open MPI's
// own binding does, so that MPI writes exactly what it writes without
// onlinews; or MPI_STATUS(ES)_IGNORE.
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a Fortran status is a C status");
inline MPI_Status* status(MPI_Fint* f) {
  return status_ignored(f) ? MPI_STATUS_IGNORE : reinterpret_cast<MPI_Status*>(f);
}
inline MPI_Status* statuses(MPI_Fint* f) {
  return statuses_ignored(f) ? MPI_STATUSES_IGNORE : reinterpret_cast<MPI_Status*>(f);
}

// A request array for one call, on the stack up to kInline entries (a
// callback MPI runs inside the call may make another).
class Requests {
 public:
  static constexpr int kInline = 16;
  Requests(const MPI_Fint* f, int n) : p_(n <= kInline ? small_ : (big_ = new MPI_Request[static_cast<std::size_t>(n)])) {
    for (int i = 0; i < n; ++i) p_[i] = PMPI_Request_f2c(f[i]);
  }
  ~Requests() { delete[] big_; }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  MPI_Request* data() { return p_; }
  void out(MPI_Fint* f, int n) const {
    for (int i = 0; i < n; ++i) f[i] = PMPI_Request_c2f(p_[i]);
  }

 private:
  MPI_Request small_[kInline];
  MPI_Request* big_ = nullptr;
  MPI_Request* p_;
};

// Each spec function's C wrapper under its PMPI name, sorted by name
// (generated with the wrappers): where MPICH's mpi_f08 binding calls
// PMPI_*, those calls are pointed at the wrappers (fortran_mpich.cpp).
struct PmpiRedirect {
  const char* pmpi_name;
  void* wrapper;
};
extern const PmpiRedirect kPmpiRedirects[];
extern const std::size_t kPmpiRedirectCount;
// What the redirection did at load: MPICH Fortran libraries found, slots
// pointed at the wrappers, slots that could not be written.
struct PatchReport {
  int objects = 0;
  int redirected = 0;
  int failed = 0;
};
const PatchReport& mpich_fortran_patch();

// At MPI_Init: true if the process's Fortran MPI entry points are not
// onlinews' (libonlinews linked after the MPI Fortran libraries): Fortran
// calls would pass unseen.
bool entries_bypassed();

}  // namespace onlinews::rt::fortran
