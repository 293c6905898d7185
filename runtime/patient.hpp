// Patient versions of the blocking point-to-point calls (mpi_functions.spec:
// patient=yes).  With ONLINEWS_PATIENT_WAITS=1 and while analysis work is
// pending on the MPI thread (analysis_pending()), the generated wrapper calls these instead of the
// PMPI function: they start the same operation without blocking, test it,
// and run short slices of the analysis until it completes
// (progress_while_waiting()).  The application sees the same MPI semantics
// (a blocking call is its nonblocking twin plus completion; MPI-3.1 §3.7),
// the same results and statuses; a message that arrives during a slice is
// taken at most one slice later.  When the analysis has nothing left to do,
// they block in MPI as the application asked.  Called on the MPI thread
// only, between the pre and post hooks of the call.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "hooks.hpp"

namespace onlinews::rt::patient {

int recv(const Call& c, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
         MPI_Status* status);
int wait(const Call& c, MPI_Request* request, MPI_Status* status);
int waitany(const Call& c, int count, MPI_Request requests[], int* index, MPI_Status* status);
int waitall(const Call& c, int count, MPI_Request requests[], MPI_Status statuses[]);
int waitsome(const Call& c, int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]);
int probe(const Call& c, int source, int tag, MPI_Comm comm, MPI_Status* status);

// Calls that did not complete at their first test and ran analysis while
// they waited (this thread; ONLINEWS_VERBOSE=2 prints it at MPI_Finalize).
std::uint64_t waited_calls();

}  // namespace onlinews::rt::patient
