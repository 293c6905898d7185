#!/bin/bash
# Builds onlinews and the threaded test programs with ThreadSanitizer (in
# ./build-tsan), runs them, and fails if any TSan report is onlinews' own
# (tests/sanitizers/reports.py).  Debian's Open MPI is not instrumented: TSan
# sees its memory accesses (through interceptors) but not the atomics that
# order them, so it reports races, lock-order inversions and an unlock of an
# unlocked mutex inside Open MPI 4.1 (ob1 matching, vader FIFOs, request
# completion, the application's buffers and ours filled by MPI's memcpy).
# Those are counted and listed, not suppressed by library name: a report is
# ours when the innermost frame (below the sanitizer runtime and the C and
# C++ libraries) of one of its stacks is onlinews code -- the racing access, the
# lock, the thread creation is ours.  (onlinews' own PMPI calls drive Open
# MPI's progress engine, which then completes other threads' requests inside
# them: those races are Open MPI's, with onlinews frames further out.)
# Usage: tests/sanitizers/run_tsan.sh      (a few minutes; logs kept on failure)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONLINEWS_BUILD_BENCHMARKS=OFF \
      -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread > /dev/null
cmake --build build-tsan -j "$(nproc)" --target onlinews onlinews_unit_tests thread_ring_plain probe_thread thread_multiple > /dev/null
logs=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# (history_size=7, the most: each thread keeps its last 2^20 accesses'
# stacks instead of 2^16.  A fresh-clone CI run reported our read of a
# tool allreduce's result against a write "by thread T4: [failed to restore
# the stack]": Open MPI's copy of the message inside an application
# thread's MPI call, whose stack had left the history, so reports.py could
# not see it was MPI's.)
export TSAN_OPTIONS="log_path=$logs/tsan halt_on_error=0 exitcode=0 history_size=7"
cd "$logs"
echo "== unit tests (buffers, in-process transport threads)"
"$root/build-tsan/tests/onlinews_unit_tests" > unit.log 2>&1 || { tail -20 unit.log; exit 1; }
# (Cuts every 0.05 s: a dozen epochs, whose collectives and cut broadcasts
# the application threads' MPI calls progress, and run our reduction
# operators in; a CI run hit this only when load stretched the run.)
echo "== thread_ring: 4 ranks x 3 threads, onlinews preloaded, an epoch every 0.05 s"
mpirun --oversubscribe -np 4 -x OMPI_MCA_btl -x TSAN_OPTIONS -x ONLINEWS_EPOCH_SECONDS=0.05 \
       -x LD_PRELOAD="$root/build-tsan/runtime/libonlinews.so" \
       "$root/build-tsan/tests/mpi/thread_ring_plain" 3 120 2 > ring.log 2>&1 || { tail -20 ring.log; exit 1; }
grep -q "status errors: 0" ring.log || { tail -20 ring.log; exit 1; }
echo "== thread_ring with ONLINEWS_SAMPLING (signal handlers, sample rings, timers of every thread)"
mpirun --oversubscribe -np 4 -x OMPI_MCA_btl -x TSAN_OPTIONS -x ONLINEWS_SAMPLING=1000 \
       -x LD_PRELOAD="$root/build-tsan/runtime/libonlinews.so" \
       "$root/build-tsan/tests/mpi/thread_ring_plain" 3 120 2 > ring_sampled.log 2>&1 || { tail -20 ring_sampled.log; exit 1; }
grep -q "status errors: 0" ring_sampled.log || { tail -20 ring_sampled.log; exit 1; }
echo "== probe_thread: a probed message received on another thread"
mpirun --oversubscribe -np 2 -x OMPI_MCA_btl -x TSAN_OPTIONS "$root/build-tsan/tests/mpi/probe_thread" > probe.log 2>&1 ||
  { tail -20 probe.log; exit 1; }
echo "== thread_multiple: two threads per rank exchanging at once (own tags, one tag)"
for mode in tags same; do
  mpirun --oversubscribe -np 2 -x OMPI_MCA_btl -x TSAN_OPTIONS "$root/build-tsan/tests/mpi/thread_multiple" $mode \
    > multiple_$mode.log 2>&1 || { tail -20 multiple_$mode.log; exit 1; }
done
/usr/bin/python3 "$root/tests/sanitizers/reports.py" "$logs/tsan" "$root" || { echo "(logs in $logs)"; exit 1; }
rm -rf "$logs"
