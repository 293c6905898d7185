#!/bin/bash
# The second README command (and what CI runs): sets up, builds from scratch
# and runs every test, twice:
#   1. ./build against Open MPI (the default MPI): unit, MPI scenarios,
#      install, tools, examples;
#   2. ./build-mpich against MPICH (-DONLINEWS_MPI=mpich): the same library,
#      its MPI scenarios, install and example tests (the unit and tools
#      tests use no MPI), less tests/mpich_excluded.txt.
# Each step runs even if the one before failed; the exit code says whether all passed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch_libomp16.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
# MPI scenarios are timed with sleeps: ctest runs them one at a time.
echo "== 1/2: Open MPI (./build)"
rm -rf build
if scripts/build.sh build; then
  ctest --test-dir build --output-on-failure || rc=1
else
  rc=1
fi
echo "== 2/2: MPICH (./build-mpich)"
rm -rf build-mpich
excluded=$(grep -v '^#' tests/mpich_excluded.txt | grep . | paste -sd'|')  # (regular expressions)
if scripts/build.sh build-mpich -DONLINEWS_MPI=mpich -DONLINEWS_BUILD_BENCHMARKS=OFF; then
  ctest --test-dir build-mpich --output-on-failure -L 'mpi|install|example' -E "^(${excluded})\$" || rc=1
else
  rc=1
fi
[ "$rc" -eq 0 ] && echo "scripts/test.sh: all tests passed (Open MPI and MPICH)" || echo "scripts/test.sh: FAILED"
exit "$rc"
