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
// MPICH's Fortran bindings call the C MPI_* functions: no Fortran entry
// points there (their call sites name the binding; docs/output.md).
#pragma once
#include <mpi.h>

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
// A status out, unless the Fortran caller passed MPI_STATUS_IGNORE.
void status_out(MPI_Fint* f, const MPI_Status* c);
// Request and status arrays: the C arrays live in thread-local scratch
// space (grown, never shrunk) between the call's _in and _out.
MPI_Request* requests_in(const MPI_Fint* f, int n);
void requests_out(MPI_Fint* f, int n);
MPI_Status* statuses_in(MPI_Fint* f, int n);  // MPI_STATUSES_IGNORE if the caller ignores them
void statuses_out(MPI_Fint* f, int n);

}  // namespace onlinews::rt::fortran
