#!/bin/bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the library (issue 12):
# builds everything with -DONLINEWS_SANITIZE=address,undefined in
# ./build-asan (the library, its unit tests, the scenario programs, the
# examples), then runs
#   * the unit tests and the fuzz targets' fixed inputs,
#   * every MPI scenario, with its time checks printed, not checked
#     (run_scenario.py --untimed: the library runs several times slower
#     here; times are checked in ./build), less tests/sanitizers/asan_excluded.txt,
#   * the examples and the installed package's consumers,
#   * 12 random programs with requested cuts (tests/mpi/fuzz_programs.py),
# and fails if a test fails or if any sanitizer report is onlinews' own
# (tests/sanitizers/reports.py).  Undefined behaviour ends the program
# (-fno-sanitize-recover), an ASan error too.  Leaks do not end it
# (LSAN exitcode=0): Debian's Open MPI keeps its plug-ins' data until the
# process exits, so every rank ends with a hundred or so leak reports; they
# are sorted by their allocation's innermost frame, and listed.
# A compiler bug to know of: Debian's GCC 12 can miscompile
# runtime/output.cpp (the coroutine write_epoch_output) with
# -fsanitize=address,undefined, depending only on incidental input such as
# the source's absolute path and -Wall: an ASan global descriptor then holds
# the size 4294967300 (`objdump -s -j .data.rel.local output.cpp.o | grep
# "04000000 01000000"`), and every program linking the library hangs or
# crashes in __asan_register_globals before main.  Seen with the tree at
# /work/main (not at /check/work/main or /tmp/ciclone, same commit); other
# flags made GCC stop with an internal error in combine.  If the ASan tests
# time out at start-up, look there first (2026-12-01).
# Usage: tests/sanitizers/run_asan.sh      (logs kept on failure)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
scripts/build.sh build-asan -DONLINEWS_SANITIZE=address,undefined -DONLINEWS_BUILD_BENCHMARKS=OFF
logs=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1" LSAN_OPTIONS="exitcode=0"
export UBSAN_OPTIONS="log_path=$logs/asan:print_stacktrace=1"
excluded=$(grep -v '^#' tests/sanitizers/asan_excluded.txt | grep . | paste -sd'|')  # (regular expressions)
rc=0
# Untimed, so two at a time.
ctest --test-dir build-asan --output-on-failure -j 2 -E "^(${excluded})\$" || rc=1
/usr/bin/python3 tests/mpi/fuzz_programs.py --seeds 1-12 --workdir build-asan/tests/mpi/runs/fuzz_programs_asan \
  --mpiexec "$(command -v mpiexec)" --exe build-asan/tests/mpi/random_program \
  --plain build-asan/tests/mpi/random_program_plain > "$logs/fuzz_programs.log" 2>&1 ||
  { tail -30 "$logs/fuzz_programs.log"; rc=1; }
tail -2 "$logs/fuzz_programs.log"
/usr/bin/python3 tests/sanitizers/reports.py "$logs/asan" "$root" || rc=1
if [ "$rc" -eq 0 ]; then
  rm -rf "$logs"
else
  echo "run_asan.sh: FAILED (logs in $logs)"
fi
exit "$rc"
