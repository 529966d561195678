#!/usr/bin/env bash
# (The tensor-core kernel and its switches STROP_SKINNY_FMA / STROP_SKINNY_STEPS were not kept:
# they are bench/probes/blr-skinny-mma-tried.patch, which applies to 3b99a3c.)
# Session 30's GPU calls: the skinny stages on tensor cores (operators/blr/blr_skinny_mma.cu).
#   PART=mma bash bench/probes/session30-run.sh OUT  # build; the few-token tests (mma with one
#       and two k-steps per turn, the CUDA-core kernel forced), the whole gpu_blr suite; then
#       blr_bench on LAYER (default Llama-7B) at BATCHES: graph replay and per call with the
#       tensor-core kernel, graph replay with STROP_SKINNY_STEPS=2, both with STROP_SKINNY_FMA=1
#   PART=tests: every GPU suite (SUITES), then gpu_blr with STROP_TUNE=1
#   PART=bench: blr_bench over every layer at BATCHES, graph replay and per call
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session30}
source "$(dirname "$0")/probe-build.sh"
bench() {  # name, env (or -), extra arguments
  local start=$(date +%s) vars=${2/#-/}
  env $vars timeout ${BENCH_TIMEOUT:-200} ./build-gpu/bench/blr_bench --reps 20 "${@:3}" \
    --csv /dev/null --csv16 "$out/blr16-bench$tag-$1-$dev.csv" \
    --json "$out/blr-summary$tag-$1-$dev.json" >/dev/null 2>&1
  echo "blr_bench $1${vars:+ ($vars)}: exit code $? ($(($(date +%s) - start)) s)"
}
few="gpu_blr/decode_and_skinny_paths_match_cpu*:gpu_blr/skinny_layers_chained_without_syncs_match_cpu"
case "${PART:-mma}" in
mma)
  run_tests "$few" few-mma
  run_tests "$few" few-mma-steps2 STROP_SKINNY_STEPS=2
  run_tests "$few" few-fma STROP_SKINNY_FMA=1
  run_tests gpu_blr blr
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-100}
  args=(--layer "${LAYER:-Llama-7B}" --batches "${BATCHES:-1,2,4,8,16}")
  bench graph-mma - --graph "${args[@]}"
  summarize "$out/blr16-bench$tag-graph-mma-$dev.csv"
  bench graph-mma-steps2 STROP_SKINNY_STEPS=2 --graph "${args[@]}"
  summarize "$out/blr16-bench$tag-graph-mma-steps2-$dev.csv"
  bench graph-fma STROP_SKINNY_FMA=1 --graph "${args[@]}"
  summarize "$out/blr16-bench$tag-graph-fma-$dev.csv"
  bench call-mma - "${args[@]}"
  summarize "$out/blr16-bench$tag-call-mma-$dev.csv"
  bench call-fma STROP_SKINNY_FMA=1 "${args[@]}"
  summarize "$out/blr16-bench$tag-call-fma-$dev.csv"
  ;;
groups4)  # the tensor-core kernel with tiles of 256 columns (STROP_SKINNY_STEPS=4)
  run_tests "$few" few-mma-groups4 STROP_SKINNY_STEPS=4
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-100}
  args=(--layer "${LAYER:-Llama-7B}" --batches "${BATCHES:-1,2,4,8,16}")
  bench graph-mma-groups4 STROP_SKINNY_STEPS=4 --graph "${args[@]}"
  bench graph-fma STROP_SKINNY_FMA=1 --graph "${args[@]}"
  bench call-mma-groups4 STROP_SKINNY_STEPS=4 "${args[@]}"
  bench call-fma STROP_SKINNY_FMA=1 "${args[@]}"
  ;;
tests)
  run_tests "${SUITES:-gpu_gemm_tuning:gpu_blr:gpu_stl:gpu_kron:gpu_ks:gpu_factorize}" all
  run_tests gpu_blr blr-tuned STROP_TUNE=1
  ;;
bench)
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-150}
  bench graph - --graph --batches "${BATCHES:-1,2,3,4,8,16}"
  summarize "$out/blr16-bench$tag-graph-$dev.csv"
  bench call - --batches "${BATCHES:-1,2,3,4,8,16}"
  summarize "$out/blr16-bench$tag-call-$dev.csv"
  ;;
esac
