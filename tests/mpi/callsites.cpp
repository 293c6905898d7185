// Call sites, in an unmodified binary (built without onlinews, compiled
// with -g -O2; callsites.py runs it under LD_PRELOAD=libonlinews.so).  Two
// ranks.  Rank 1 receives rank 0's two messages in two functions,
// app::recv_early and app::recv_late, at the lines marked SITE-EARLY and
// SITE-LATE; rank 0 sleeps 0.2 s before the first send and 0.4 s more
// before the second.  So MPI_Recv waits 0.2 s (Late Sender) at the first
// site and 0.4 s at the second, and the two are two call paths of MPI_Recv
// under the same caller region.
#include <mpi.h>
#include <time.h>

namespace app {

void sleep_s(double s) {
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// (noinline: each receive stays in the function named after it.)
[[gnu::noinline]] void recv_early(double* buf) {
  MPI_Recv(buf, 4, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  // SITE-EARLY
}
[[gnu::noinline]] void recv_late(double* buf) {
  MPI_Recv(buf, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  // SITE-LATE
}

}  // namespace app

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double buf[4] = {1, 2, 3, 4};
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    app::sleep_s(0.2);
    MPI_Send(buf, 4, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    app::sleep_s(0.4);
    MPI_Send(buf, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
  } else if (rank == 1) {
    app::recv_early(buf);
    app::recv_late(buf);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
