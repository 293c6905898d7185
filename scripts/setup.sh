#!/bin/bash
# Installs the Debian packages onlinews needs to build, test and run (once;
# later calls only check).  Uses sudo when not root.
set -euo pipefail
packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
          catch2 python3 python3-h5py python3-numpy python3-matplotlib libomp-dev clang libdw-dev
          python3-paraview xvfb xauth gfortran
          mpich libmpich-dev libhdf5-mpich-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
echo "setup: done"
