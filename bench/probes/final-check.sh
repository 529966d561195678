#!/usr/bin/env bash
# The last GPU calls of a session, on a clean build of the working tree: PART=build configures and
# builds every target (tests, CLI, examples; no benchmarks) in build-final with 16 jobs;
# PART=tests (the next call, same machine) runs every CPU test with CTest, then every GPU
# suite.  Logs go to OUT.
#   PART=build bash bench/probes/final-check.sh OUT; PART=tests SESSION=session32 TAG=-v2 bash ... OUT
# GPU_ARGS (e.g. --run_test=gpu_ks) narrows the GPU suites.
set -uo pipefail
out=${1:?OUT}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
case "${PART:-build}" in
build)
  start=$(date +%s)
  cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_BENCH=OFF >"$out/build-final-$dev.log" 2>&1
  cmake --build build-final -j 16 >>"$out/build-final-$dev.log" 2>&1
  echo "build exit code $? ($(($(date +%s) - start)) s)"
  grep -E "error|warning" "$out/build-final-$dev.log" | head -20
  ;;
tests)
  start=$(date +%s)
  (cd build-final && ctest -j 12 -LE gpu --output-on-failure >"$out/ctest-final-$dev.log" 2>&1)
  echo "ctest (CPU) exit code $? ($(($(date +%s) - start)) s)"
  tail -4 "$out/ctest-final-$dev.log"
  start=$(date +%s)
  timeout 420 ./build-final/tests/strop_gpu_tests --report_level=short --log_level=error ${GPU_ARGS:-} \
    >"$out/gpu-tests-${SESSION:-session}${TAG:-}-all-$dev.log" 2>&1
  echo "gpu tests exit code $? ($(($(date +%s) - start)) s)" |
    tee -a "$out/gpu-tests-${SESSION:-session}${TAG:-}-all-$dev.log"
  tail -4 "$out/gpu-tests-${SESSION:-session}${TAG:-}-all-$dev.log"
  ;;
esac
