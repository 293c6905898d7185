#include "patient.hpp"

namespace onlinews::rt::patient {
namespace {

thread_local std::uint64_t t_waited = 0;

// Tests with `test` (returns MPI's code; sets `done`) and runs analysis
// slices in between; once the analysis has nothing left, finishes with
// `block`, the blocking call itself.
template <class Test, class Block>
int until_done(const Call& c, Test test, Block block) {
  for (bool first = true;; first = false) {
    int done = 0;
    const int rc = test(&done);
    if (rc != MPI_SUCCESS || done != 0) {
      if (!first) progress_wait_done(c.caller);
      return rc;
    }
    t_waited += first ? 1 : 0;
    if (!progress_while_waiting(c.caller)) {
      progress_wait_done(c.caller);
      return block();
    }
  }
}

}  // namespace

std::uint64_t waited_calls() { return t_waited; }

// Polls with MPI_Iprobe, then receives with MPI_Recv itself (the message
// probed, or under MPI_THREAD_MULTIPLE a later one if another thread took
// it: still a blocking receive).  Not MPI_Irecv completed by MPI_Test: MPICH
// 4.0 reports that request's errors (MPI_ERR_TRUNCATE) through
// MPI_COMM_WORLD's error handler, where MPI_Recv uses `comm`'s.
int recv(const Call& c, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
         MPI_Status* status) {
  // (Arguments MPI_Iprobe does not check: MPI_Recv reports their error at once.)
  if (count < 0 || type == MPI_DATATYPE_NULL) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  const int rc = until_done(
      c, [&](int* done) { return PMPI_Iprobe(source, tag, comm, done, MPI_STATUS_IGNORE); },
      [] { return MPI_SUCCESS; });
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int wait(const Call& c, MPI_Request* request, MPI_Status* status) {
  return until_done(
      c, [&](int* done) { return PMPI_Test(request, done, status); }, [&] { return PMPI_Wait(request, status); });
}

int waitany(const Call& c, int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return until_done(
      c, [&](int* done) { return PMPI_Testany(count, requests, index, done, status); },
      [&] { return PMPI_Waitany(count, requests, index, status); });
}

int waitall(const Call& c, int count, MPI_Request requests[], MPI_Status statuses[]) {
  return until_done(
      c, [&](int* done) { return PMPI_Testall(count, requests, done, statuses); },
      [&] { return PMPI_Waitall(count, requests, statuses); });
}

int waitsome(const Call& c, int count, MPI_Request requests[], int* outcount, int indices[],
             MPI_Status statuses[]) {
  // MPI_Testsome reports 0 while nothing completed, MPI_UNDEFINED (like
  // MPI_Waitsome) when no request is active.
  return until_done(
      c,
      [&](int* done) {
        const int rc = PMPI_Testsome(count, requests, outcount, indices, statuses);
        *done = *outcount != 0;
        return rc;
      },
      [&] { return PMPI_Waitsome(count, requests, outcount, indices, statuses); });
}

int probe(const Call& c, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return until_done(
      c, [&](int* done) { return PMPI_Iprobe(source, tag, comm, done, status); },
      [&] { return PMPI_Probe(source, tag, comm, status); });
}

}  // namespace onlinews::rt::patient
