#!/usr/bin/env bash
# On a GPU machine (H100/H200): build the Strassen-Tile GPU tests and benchmark for sm_90,
# run the GPU tests, then stl_bench with the given arguments; logs, CSV and JSON go to
# OUTPUT_DIR, named after the device.
#   scripts/gpu-stl.sh OUTPUT_DIR [stl_bench arguments, e.g. --sizes 8192 --reps 20]
# STROP_SKIP_TESTS=1 runs the benchmark only (a second call on a machine still warm);
# STROP_ALL_GPU_TESTS=1 runs every GPU test suite, not only the STL one.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
shift || true
mkdir -p "$out"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
device=${device:-unknown}
tag=${STROP_RUN_TAG:-}
{
  echo "# strop gpu-stl $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${device}"
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
  start=$(date +%s)
  cmake --build build-gpu -j 16 --target strop_gpu_tests stl_bench ${STROP_EXTRA_TARGETS:-} 2>&1 |
    grep -E "error|warning" | head -30
  echo "build: $(($(date +%s) - start)) s"
  if [ "${STROP_SKIP_TESTS:-0}" != 1 ]; then
    filter=--run_test=gpu_stl
    [ "${STROP_ALL_GPU_TESTS:-0}" = 1 ] && filter=
    echo "## GPU tests ${filter:-(all suites)}"
    timeout 300 ./build-gpu/tests/strop_gpu_tests $filter --report_level=short --log_level=error
    echo "gpu tests exit code: $?"
  fi
  echo "## stl_bench $*"
  timeout 450 ./build-gpu/bench/stl_bench "$@" --csv "$out/stl-bench${tag}-${device}.csv" \
    --json "$out/stl-summary${tag}-${device}.json"
  echo "bench exit code: $?"
  cat "$out/stl-summary${tag}-${device}.json"
} 2>&1 | tee "$out/gpu-stl${tag}-${device}.log"
