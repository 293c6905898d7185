#!/bin/bash
# The first README command: sets up, builds, and runs the example 2-D heat
# solver (deliberately imbalanced) on 4 ranks under the analyzer.  Prints the
# analyzer's summary and writes demo/heat2d.h5 (+ demo/heat2d.xdmf).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
mkdir -p demo
rm -f demo/heat2d.h5 demo/heat2d.xdmf
# Open MPI refuses root unless told, and needs --oversubscribe for more ranks
# than cores; both are harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ONLINEWS_OUTPUT=demo/heat2d.h5 mpirun --oversubscribe -np 4 build/examples/heat2d
echo
echo "Result file: demo/heat2d.h5 -- for example:"
echo "  /usr/bin/python3 -c \"import h5py; f = h5py.File('demo/heat2d.h5'); print(list(f['profile']))\""
