#!/bin/bash
# The second README command (and what CI runs): sets up, builds from scratch
# and runs every test:
#   1. ./build against Open MPI (the default MPI): unit (with the fuzz
#      targets on fixed random inputs), MPI scenarios (with 50 random
#      programs and 20 kill trials), install, tools, examples;
#   2. ./build-mpich against MPICH (-DONLINEWS_MPI=mpich): the same library,
#      its MPI scenarios, install and example tests, less
#      tests/mpich_excluded.txt (the unit and tools tests use no MPI: they
#      run in step 1, and the unit tests are not built here, 2.5 min less);
#   3. the fuzz targets under libFuzzer with ASan and UBSan (Clang,
#      ./build-fuzz), 60 s each (scripts/fuzz.sh);
#   4. sanitizers: everything built with ASan and UBSan (./build-asan): unit
#      tests, MPI scenarios (untimed), examples, 12 random programs
#      (tests/sanitizers/run_asan.sh); the buffers, threads and sampling
#      under TSan (./build-tsan, tests/sanitizers/run_tsan.sh).
# Each step runs even if the one before failed; the exit code says whether all passed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch_libomp16.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
failed=()  # the steps that failed, for the summary at the end
took=()    # each step's minutes: CI stops at 90 (the whole run took 49-79 so far)
step_start=$SECONDS
step_done() { took+=("$1 $(( (SECONDS - step_start + 30) / 60 )) min"); step_start=$SECONDS; }
# MPI scenarios are timed with sleeps: ctest runs them one at a time.
echo "== 1/4: Open MPI (./build)"
rm -rf build
if scripts/build.sh build; then
  ctest --test-dir build --output-on-failure || { rc=1; failed+=("1/4 Open MPI"); }
else
  rc=1; failed+=("1/4 Open MPI (build)")
fi
step_done "1/4"
echo "== 2/4: MPICH (./build-mpich)"
rm -rf build-mpich
excluded=$(grep -v '^#' tests/mpich_excluded.txt | grep . | paste -sd'|')  # (regular expressions)
if scripts/build.sh build-mpich -DONLINEWS_MPI=mpich -DONLINEWS_BUILD_BENCHMARKS=OFF -DONLINEWS_BUILD_UNIT_TESTS=OFF; then
  ctest --test-dir build-mpich --output-on-failure -L 'mpi|install|example' -E "^(${excluded})\$" ||
    { rc=1; failed+=("2/4 MPICH"); }
else
  rc=1; failed+=("2/4 MPICH (build)")
fi
step_done "2/4"
echo "== 3/4: libFuzzer, ASan, UBSan (./build-fuzz)"
rm -rf build-fuzz
scripts/fuzz.sh 60 || { rc=1; failed+=("3/4 libFuzzer"); }
step_done "3/4"
echo "== 4/4: ASan + UBSan (./build-asan), TSan (./build-tsan)"
rm -rf build-asan build-tsan
tests/sanitizers/run_asan.sh || { rc=1; failed+=("4/4 ASan + UBSan"); }
tests/sanitizers/run_tsan.sh || { rc=1; failed+=("4/4 TSan"); }
step_done "4/4"
echo "scripts/test.sh: steps took $(printf '%s, ' "${took[@]}" | sed 's/, $//') ($(( (SECONDS + 30) / 60 )) min in all, set-up included)"
if [ "$rc" -eq 0 ]; then
  echo "scripts/test.sh: all tests passed (Open MPI, MPICH, fuzzing, sanitizers)"
else
  # A summary last: a CI log shown cut short keeps its end.
  steps=$(printf '%s; ' "${failed[@]}")
  echo "scripts/test.sh: FAILED: ${steps%; }"
  for d in build build-mpich build-asan; do
    f=$d/Testing/Temporary/LastTestsFailed.log
    if [ -s "$f" ]; then echo "  failed in $d: $(cut -d: -f2- "$f" | paste -sd' ')"; fi
  done
fi
exit "$rc"
