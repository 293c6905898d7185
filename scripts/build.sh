#!/bin/bash
# Configures and builds onlinews (after scripts/setup.sh).
# usage: scripts/build.sh [DIR [CMAKE OPTIONS...]]
#   scripts/build.sh                                 ./build, the system's default MPI (Open MPI)
#   scripts/build.sh build-mpich -DONLINEWS_MPI=mpich  ./build-mpich, MPICH (mpicc.mpich, h5pcc.mpich)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > /dev/null
cmake --build "$dir" -j "$(nproc)"
