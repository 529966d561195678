#!/usr/bin/env bash
# The test suite on a fresh machine: install dependencies, build, run every test with CTest.
# GPU tests report "skipped" without a CUDA device. CUDA code is built for sm_90 only here
# (set CMAKE_CUDA_ARCHITECTURES to override) to keep the build short.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}"
cd build
ctest --output-on-failure -j "${STROP_JOBS:-$(nproc)}"
