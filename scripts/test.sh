#!/usr/bin/env bash
# The test suite on a fresh machine: install dependencies, build, run every test with CTest.
# GPU tests report "skipped" without a CUDA device. CUDA code is built for sm_90 only here
# (set CMAKE_CUDA_ARCHITECTURES to override) to keep the build short.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The benchmark programs are not tests (they run on GPU machines, scripts/gpu-bench.sh builds
# them there), and without a GPU the GPU tests could only report skipped: they are built
# where nvidia-smi sees a device (STROP_BUILD_GPU_TESTS=ON builds them anyway). Both keep CI
# on a 2-core machine inside its 30 minutes (the GPU tests were ~10 % of its build).
gpu_tests=$(nvidia-smi -L >/dev/null 2>&1 && echo ON || echo OFF)
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" \
  -DSTROP_BUILD_BENCH="${STROP_BUILD_BENCH:-OFF}" \
  -DSTROP_BUILD_GPU_TESTS="${STROP_BUILD_GPU_TESTS:-$gpu_tests}"
cd build
ctest --output-on-failure -j "${STROP_JOBS:-$(nproc)}"
