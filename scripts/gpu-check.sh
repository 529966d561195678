#!/usr/bin/env bash
# On a GPU machine (H100/H200): build the GPU tests and the demo for sm_90, run them, and
# write a summary with the device name. Usage: scripts/gpu-check.sh [OUTPUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results}
mkdir -p "$out"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
device=${device:-unknown}
log="$out/gpu-check-${device}.log"
{
  echo "# strop gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${device}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  nvcc --version | tail -2
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  # One target at a time, so that one failing build does not hide the others' results.
  for target in strop strop_gpu_tests strop_unit_tests strop_cli ks_bench factorize_bench; do
    cmake --build build-gpu -j 16 --target "$target" 2>&1 | grep -E "error|Error|Built target" | tail -5
  done
  echo "## GPU tests"
  ./build-gpu/tests/strop_gpu_tests --report_level=short --log_level=error
  echo "gpu tests exit code: $?"
  echo "## unit tests (CPU, same build)"
  ./build-gpu/tests/strop_unit_tests --report_level=short
  echo "unit tests exit code: $?"
  echo "## demo"
  ./build-gpu/strop demo --device cuda
  echo "## ks_bench --quick"
  ./build-gpu/bench/ks_bench --quick --reps 5 --csv "$out/ks-bench-quick.csv" --json "$out/ks-summary-quick.json" | tail -20
} 2>&1 | tee "$log"
