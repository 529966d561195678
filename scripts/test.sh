#!/usr/bin/env bash
# The test suite on a fresh machine: install dependencies, build, run every test with CTest.
# GPU tests report "skipped" without a CUDA device. CUDA code is built for sm_90 only here
# (set CMAKE_CUDA_ARCHITECTURES to override) to keep the build short.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The benchmark programs are not tests (they run on GPU machines, scripts/gpu-bench.sh builds
# them there): leaving them out keeps CI on a 2-core machine well inside its 30 minutes.
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" \
  -DSTROP_BUILD_BENCH="${STROP_BUILD_BENCH:-OFF}"
cd build
ctest --output-on-failure -j "${STROP_JOBS:-$(nproc)}"
