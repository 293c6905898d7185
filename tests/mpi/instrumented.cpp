// Compiler instrumentation (-finstrument-functions, linked with onlinews):
// every function of this file is a region named after it.  2 ranks.
// Rank 0 runs app::produce(), which calls app::tiny() 1000 times and sleeps
// 0.3 s (in a helper that is not instrumented), then sends; rank 1 receives
// in app::consume(double*).  So:
//   app::produce() on rank 0: 0.3 s, 1 visit; app::tiny(): 1000 visits;
//   Late Sender of 0.3 s in MPI_Recv under app::consume(double*) on rank 1,
//   its delay cost (0.3 s) on app::produce() on rank 0;
// with ONLINEWS_FILTER='app::tiny*' (instrumented_filter.expect) app::tiny()
// is not a region, and nothing else changes.  Before that, rank 0 leaves
// app::deep() by longjmp (no exit hook runs for it) and app::thrower() by
// an exception: the exits that follow still close the right regions, so
// app::produce() lies directly under the root (not under app::jumper()).
#include <mpi.h>
#include <setjmp.h>
#include <time.h>

#include <stdexcept>

namespace app {

__attribute__((no_instrument_function)) static void sleep_s(double s) {
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

volatile double sink = 0;
[[gnu::noinline]] void tiny() { sink = sink + 1; }

jmp_buf g_jump;
[[gnu::noinline]] void deep(int n) {
  if (n < 0) return;  // (never: keeps GCC from calling it infinite recursion)
  if (n == 0) longjmp(g_jump, 1);
  deep(n - 1);
}
[[gnu::noinline]] void jumper() {
  if (setjmp(g_jump) == 0) deep(3);
}
[[gnu::noinline]] void thrower() { throw std::runtime_error("out"); }
[[gnu::noinline]] void catcher() {
  try {
    thrower();
  } catch (const std::exception&) {
  }
}

[[gnu::noinline]] void produce() {
  for (int i = 0; i < 1000; ++i) tiny();
  sleep_s(0.3);
}

[[gnu::noinline]] void consume(double* buf) {
  MPI_Recv(buf, 4, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

}  // namespace app

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double buf[4] = {0};
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    app::jumper();
    app::catcher();
    app::produce();
    MPI_Send(buf, 4, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    app::consume(buf);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
