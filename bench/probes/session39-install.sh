#!/usr/bin/env bash
# Session 39: the installed package on a CUDA machine. Builds strop and the strop tool twice,
# static (as CI and scripts/build.sh do) and shared (BUILD_SHARED_LIBS=ON), and runs the test
# install.find_package in each: install into a prefix, build tests/install (a shared library
# of its own linking strop::strop, and a program) against it, run it (the Kronecker check runs
# on the GPU too), run the installed strop tool.
#   bash bench/probes/session39-install.sh OUT
set -uo pipefail
out=${1:?OUT}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
for kind in static shared; do
  start=$(date +%s)
  shared=$([ $kind = shared ] && echo ON || echo OFF)
  log="$out/install-$kind-$dev.log"
  cmake -S . -B build-$kind -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DBUILD_SHARED_LIBS=$shared -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=OFF \
    -DSTROP_BUILD_GPU_TESTS=OFF >"$log" 2>&1
  cmake --build build-$kind -j 16 --target strop strop_cli >>"$log" 2>&1 ||
    { echo "$kind: build failed"; tail -30 "$log"; continue; }
  (cd build-$kind && ctest -R install -V) >>"$log" 2>&1
  echo "$kind: install.find_package exit $? ($(($(date +%s) - start)) s)"
  grep -E "max \||loaded from|^[0-9]+: strop [0-9]" "$log"
done
