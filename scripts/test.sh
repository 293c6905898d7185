#!/bin/bash
# The second README command (and what CI runs): sets up, builds from scratch
# in ./build, and runs every test (unit, MPI scenarios, install, examples).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch_libomp16.sh
rm -rf build
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# MPI scenarios are timed with sleeps: run them one at a time on small machines.
ctest --test-dir build --output-on-failure
