#!/usr/bin/env bash
# Session 22, tried and reverted (commit e5ff32f): the GPU call that measured 128-thread CTAs
# (two per SM) for chunks of at most 1024 elements: the host unit suite of the planner,
# gpu_kron three times and the full kron_bench (scripts/gpu-bench.sh), into OUT.
set -uo pipefail
out=${1:?OUT}
STROP_EXTRA_TARGETS=strop_unit_tests STROP_RUN_TAG=-session22-threads \
  bash scripts/gpu-bench.sh kron "$out" --reps 20 --rowmajor >/dev/null 2>&1
log=$(ls "$out"/gpu-kron-session22-threads-*.log)
{
  ./build-gpu/tests/strop_unit_tests --run_test=kron_matmul_host --report_level=short
  for i in 2 3; do
    ./build-gpu/tests/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error
  done
} >>"$log" 2>&1
grep -E "build:|passed|failed|error|float32: median|float64: median|float speedup|half over" "$log"
