#!/usr/bin/env bash
# On a GPU machine (H100/H200): build one benchmark and the GPU tests for sm_90, run the
# benchmark's GPU test suite, then the benchmark with the given arguments; the log, CSV and
# JSON go to OUTPUT_DIR, named after the benchmark and the device.
#   scripts/gpu-bench.sh NAME OUTPUT_DIR [benchmark arguments]
# NAME is the benchmark without "_bench" (factorize, stl, ...); its tests are the suite
# gpu_NAME, or the ':'-separated suites of STROP_TEST_SUITES (gpu_transforms:gpu_blr).
# STROP_SKIP_TESTS=1 runs the benchmark only (a second call on a machine still warm);
# STROP_ALL_GPU_TESTS=1 runs every GPU test suite; STROP_RUN_TAG=-x adds "-x" to the
# file names; STROP_EXTRA_TARGETS builds more targets.
set -uo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/gpu-bench.sh NAME OUTPUT_DIR [benchmark arguments]}
out=${2:-bench/results}
shift 2 || shift $#
mkdir -p "$out"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
device=${device:-unknown}
tag=${STROP_RUN_TAG:-}
{
  echo "# strop gpu-bench ${name} $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${device}"
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
  start=$(date +%s)
  cmake --build build-gpu -j 16 --target strop_gpu_tests "${name}_bench" ${STROP_EXTRA_TARGETS:-} 2>&1 |
    grep -E "error|warning" | head -30
  echo "build: $(($(date +%s) - start)) s"
  if [ "${STROP_SKIP_TESTS:-0}" != 1 ]; then
    filter=--run_test=${STROP_TEST_SUITES:-gpu_${name}}
    [ "${STROP_ALL_GPU_TESTS:-0}" = 1 ] && filter=
    echo "## GPU tests ${filter:-(all suites)}"
    timeout 300 ./build-gpu/tests/strop_gpu_tests $filter --report_level=short --log_level=error
    echo "gpu tests exit code: $?"
  fi
  echo "## ${name}_bench $*"
  timeout 450 "./build-gpu/bench/${name}_bench" "$@" --csv "$out/${name}-bench${tag}-${device}.csv" \
    --json "$out/${name}-summary${tag}-${device}.json"
  echo "bench exit code: $?"
  cat "$out/${name}-summary${tag}-${device}.json"
} 2>&1 | tee "$out/gpu-${name}${tag}-${device}.log"
