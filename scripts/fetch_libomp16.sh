#!/bin/bash
# Test-only: LLVM's OpenMP runtime 16 next to Debian's default libomp 14, for
# the scenarios of OMPT callbacks that only the newer runtime delivers
# (dispatch: tests/mpi/omp_*sections_libomp16.expect).  Debian's libomp5-16
# conflicts with libomp5-14, so the library is extracted from the package
# into a cache directory, not installed; tests/mpi/CMakeLists.txt finds it
# there.  Without it (no package source) those scenarios are not built.
set -euo pipefail
dest="${XDG_CACHE_HOME:-$HOME/.cache}/onlinews/libomp-16"
if [ -f "$dest/libomp.so.5" ]; then
  echo "fetch: $dest/libomp.so.5 present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
chmod 755 "$tmp"  # (apt's download user writes here)
if ! apt-get download -qq libomp5-16 > /dev/null 2>&1; then
  $sudo apt-get update -qq > /dev/null 2>&1 || true
  if ! apt-get download -qq libomp5-16 > /dev/null 2>&1; then
    echo "fetch: Debian's libomp5-16 is not available: the libomp 16 scenarios are not built"
    exit 0
  fi
fi
dpkg-deb -x libomp5-16_*.deb x
mkdir -p "$dest"
cp -L x/usr/lib/llvm-16/lib/libomp.so.5 "$dest/libomp.so.5"
echo "fetch: libomp 16 in $dest"
