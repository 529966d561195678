#!/usr/bin/env bash
# On a GPU machine (H100/H200): build the factorization's GPU tests and benchmark for sm_90,
# run the GPU factorization tests, then factorize_bench with the given arguments; logs, CSV
# and JSON go to OUTPUT_DIR, named after the device.
#   scripts/gpu-factorize.sh OUTPUT_DIR [factorize_bench arguments, e.g. --targets --reps 3]
# STROP_SKIP_TESTS=1 runs the benchmark only (a second call on a machine still warm);
# STROP_ALL_GPU_TESTS=1 runs every GPU test suite, not only the factorization's.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
shift || true
mkdir -p "$out"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
device=${device:-unknown}
{
  echo "# strop gpu-factorize $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${device}"
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
  start=$(date +%s)
  cmake --build build-gpu -j 16 --target strop_gpu_tests factorize_bench ${STROP_EXTRA_TARGETS:-} 2>&1 |
    grep -E "error|warning" | head -30
  echo "build: $(($(date +%s) - start)) s"
  if [ "${STROP_SKIP_TESTS:-0}" != 1 ]; then
    filter=--run_test=gpu_factorize
    [ "${STROP_ALL_GPU_TESTS:-0}" = 1 ] && filter=
    echo "## GPU tests ${filter:-(all suites)}"
    timeout 300 ./build-gpu/tests/strop_gpu_tests $filter --report_level=short --log_level=error
    echo "gpu tests exit code: $?"
  fi
  echo "## factorize_bench $*"
  timeout 400 ./build-gpu/bench/factorize_bench "$@" --csv "$out/factorize-${device}.csv" \
    --json "$out/factorize-summary-${device}.json"
  echo "bench exit code: $?"
  cat "$out/factorize-summary-${device}.json"
} 2>&1 | tee "$out/gpu-factorize-${device}.log"
