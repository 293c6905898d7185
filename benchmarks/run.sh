#!/bin/bash
# Issue 11's measurements in one run and one table (benchmarks/run.py says
# what it runs).  usage: benchmarks/run.sh [BUILD_DIR] [--reps N] [--quick]
exec /usr/bin/python3 "$(dirname "$0")/run.py" "$@" --mpiexec "$(command -v mpiexec)"
