#!/usr/bin/env bash
# Installs the system packages strop needs on a fresh Debian/Ubuntu machine.
# Safe to run twice: apt-get skips what is already installed.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libeigen3-dev          # CPU linear algebra (header-only)
  libboost-test-dev      # Boost.Test (we use the header-only variant)
  libhdf5-dev            # operator persistence
  python3-h5py           # the test that reads our HDF5 files from Python
  libcli11-dev           # command-line parsing for the strop tool
  libfftw3-dev           # optional: FFTW, the CPU reference of the transform tests
  clang-format
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps.sh: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps.sh: installed ${missing[*]}"
