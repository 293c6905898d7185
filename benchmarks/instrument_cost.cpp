// Cost of a function under -finstrument-functions with onlinews' hooks: a
// call of leaf() in a loop, per call, with the function recorded (a region:
// two events) and with it filtered (ONLINEWS_FILTER='leaf*': the hooks'
// cache lookups only).  instrument_cost_plain is the same code built without
// the instrumentation.
//   mpirun -np 1 ./instrument_cost CALLS
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

volatile long g_sink = 0;
[[gnu::noinline]] void leaf(long i) { g_sink = g_sink + i; }

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
  leaf(0);  // (the first call names the function)
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) leaf(i);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("instrument_cost calls=%ld ns_per_call=%.2f\n", calls, ns / static_cast<double>(calls));
  MPI_Finalize();
  return 0;
}
