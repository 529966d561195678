#!/usr/bin/env bash
# On a GPU machine (H100/H200): build everything for sm_90, run every CTest test (GPU, unit,
# examples, CLI, h5py when present), the demo on the GPU and the short benchmarks, and write
# a log named after the device. Usage: scripts/gpu-check.sh [OUTPUT_DIR]
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
  cmake --build build-gpu -j 16 -- -k 2>&1 | grep -E "error|Error" | head -20
  echo "## GPU tests"
  ./build-gpu/tests/strop_gpu_tests --report_level=short --log_level=error
  echo "gpu tests exit code: $?"
  echo "## every CTest test (unit, GPU suites, examples, CLI, h5py)"
  (cd build-gpu && ctest -j 8 --output-on-failure 2>&1 | tail -40)
  echo "## demo"
  ./build-gpu/strop demo --device cuda -o "$out/demo.h5"
  echo "## ks_bench --quick"
  ./build-gpu/bench/ks_bench --quick --reps 5 --csv "$out/ks-bench-quick.csv" --json "$out/ks-summary-quick.json" | tail -20
} 2>&1 | tee "$log"
