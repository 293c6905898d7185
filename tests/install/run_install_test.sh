#!/bin/bash
# Installs onlinews into a temporary prefix and builds a user program three
# ways: CMake find_package, pkg-config, and an unmodified binary with
# LD_PRELOAD.  Each run must write a result file with rank 1's barrier wait.
# usage: run_install_test.sh BUILD_DIR SOURCE_DIR MPIEXEC PYTHON
set -euo pipefail
build=$1 src=$2 mpiexec=$3 python=$4
work=$(cd "$(mktemp -d)" && pwd -P)  # (onlinews-config --check prints resolved paths)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ONLINEWS_VERBOSE=0
cmake --install "$build" --prefix "$work/prefix" > /dev/null
# Open MPI's mpiexec needs --oversubscribe and passes variables with -x;
# MPICH's Hydra oversubscribes by default and passes them with -genv.
version=$("$mpiexec" --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then
  run=("$mpiexec" --oversubscribe -np 2); env_opt() { echo "-x $1=$2"; }
else
  run=("$mpiexec" -np 2); env_opt() { echo "-genv $1 $2"; }
fi

# The library exports the MPI wrappers (C and Fortran), the onlinews_* API, the OMPT entry
# point and the -finstrument-functions hooks, nothing else.
extra=$(nm -D --defined-only "$work/prefix/lib/libonlinews.so" | awk '{print $3}' |
        grep -v '^MPI_\|^mpi_[a-z0-9_]*$\|^onlinews_\|^ompt_start_tool$\|^__cyg_profile_func_enter$\|^__cyg_profile_func_exit$' || true)
if [ -n "$extra" ]; then echo "libonlinews.so exports more than its interface:"; echo "$extra" | head; exit 1; fi

check() {  # file [region the barrier lies under; "" = anywhere]
  "$python" - "$1" "$src/tools/python" "${2-phase}" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import onlinews_h5
r = onlinews_h5.Result(sys.argv[1])
w = r.value("mpi_barrier_wait", rank=1, under=sys.argv[3] or None)
print(f"{sys.argv[1]}: rank 1 waits {w:.3f} s at the barrier")
sys.exit(0 if abs(w - 0.2) < 0.03 else 1)
PY
}

# 1. CMake package
cmake -S "$src/tests/install/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake" > /dev/null
ONLINEWS_OUTPUT="$work/cmake.h5" "${run[@]}" "$work/cmake/consumer"
check "$work/cmake.h5"

# 2. pkg-config
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
mpicc=$(pkg-config --variable=mpicc onlinews)  # the wrapper of the MPI onlinews was built with
"$mpicc" "$src/tests/install/consumer/main.c" -o "$work/pc" $(pkg-config --cflags --libs onlinews)
ONLINEWS_OUTPUT="$work/pc.h5" "${run[@]}" "$work/pc"
check "$work/pc.h5"

# 3. LD_PRELOAD on a binary that was not linked with onlinews (weak stubs
#    stand in for the region calls).
cat > "$work/stubs.c" <<'C'
void onlinews_region_begin(const char* n) __attribute__((weak));
void onlinews_region_end(const char* n) __attribute__((weak));
int onlinews_active(void) __attribute__((weak));
void onlinews_region_begin(const char* n) { (void)n; }
void onlinews_region_end(const char* n) { (void)n; }
int onlinews_active(void) { return 0; }
C
"$mpicc" -I"$work/prefix/include" "$src/tests/install/consumer/main.c" "$work/stubs.c" -o "$work/plain"
if ldd "$work/plain" | grep -q onlinews; then echo "plain binary must not link onlinews"; exit 1; fi
ONLINEWS_OUTPUT="$work/preload.h5" "${run[@]}" $(env_opt LD_PRELOAD "$work/prefix/lib/libonlinews.so") "$work/plain"
check "$work/preload.h5" ""  # the stubs hide the region, the barrier is still intercepted

# 4. The installed report tool reads a result file (its modules from
#    <prefix>/share/onlinews/python, the configuration table from the
#    installed onlinews-config).
"$work/prefix/bin/onlinews-report" "$work/preload.h5" > "$work/report.txt"
grep -q "Wait at Barrier" "$work/report.txt" || { echo "onlinews-report: no Wait at Barrier"; cat "$work/report.txt"; exit 1; }
# (Into a file first: grep -q would end the pipe early, and pipefail fail it.)
"$work/prefix/bin/onlinews-report" --help-config > "$work/config.md"
grep -q ONLINEWS_BUFFER "$work/config.md" || { echo "onlinews-report --help-config"; exit 1; }
# 5. The installed onlinews-config --check finds the installed module.
#    (Without this script's ONLINEWS_* variables: they are checked too.)
(unset $(env | grep -o '^ONLINEWS_[A-Za-z0-9_]*'); "$work/prefix/bin/onlinews-config" --check) > "$work/check.txt" ||
  { echo "onlinews-config --check"; cat "$work/check.txt"; exit 1; }
grep -q "HDF5 output module OK: $work/prefix/lib/libonlinews_io.so" "$work/check.txt" ||
  { echo "onlinews-config --check did not check the installed module"; cat "$work/check.txt"; exit 1; }
echo PASS
