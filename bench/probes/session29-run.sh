#!/usr/bin/env bash
# Session 29's GPU calls: the skinny path of the BLR plans (operators/blr/blr_skinny.cu).
#   PART=quick bash bench/probes/session29-run.sh OUT  # build; gpu_blr (SUITES); blr_bench
#       graph replay and per call on LAYER (default Llama-7B) at 1-16 tokens
#   PART=tests: every GPU suite that c7f76da and this session touch (SUITES), then gpu_blr with
#       STROP_TUNE=1
#   PART=bench: blr_bench over every layer at BATCHES, graph replay and per call (TESTS=1:
#       gpu_blr first)
#   PART=final: every suite (as PART=tests), then blr_bench at 1-16 tokens (graph, per call)
#   PART=padded: gpu_blr (tuning off and on), then blr_bench at 1-8 tokens (graph, per call)
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session29}
source "$(dirname "$0")/probe-build.sh"
bench() {  # name, extra arguments
  local start=$(date +%s)
  timeout ${BENCH_TIMEOUT:-200} ./build-gpu/bench/blr_bench --reps 20 "${@:2}" --csv /dev/null \
    --csv16 "$out/blr16-bench$tag-$1-$dev.csv" --json "$out/blr-summary$tag-$1-$dev.json" \
    >/dev/null 2>&1
  echo "blr_bench $1: exit code $? ($(($(date +%s) - start)) s)"
  cat "$out/blr-summary$tag-$1-$dev.json"
}
case "${PART:-quick}" in
probe)
  # (ran once with a temporary switch STROP_SKINNY_PROBE=rows,blocks-per-SM,PDL over the
  # variants 8,1,1 8,1,0 16,1,1 8,2,1 16,2,1; the switch is gone, see bench/NOTES-blr.md)
  ;;
quick)
  run_tests "${SUITES:-gpu_blr}" blr
  bench graph-quick --graph --layer "${LAYER:-Llama-7B}" --batches "${BATCHES:-1,2,4,8,16}"
  summarize "$out/blr16-bench$tag-graph-quick-$dev.csv"
  bench call-quick --layer "${LAYER:-Llama-7B}" --batches "${BATCHES:-1,2,4,8,16}"
  summarize "$out/blr16-bench$tag-call-quick-$dev.csv"
  ;;
tests)
  run_tests "${SUITES:-gpu_gemm_tuning:gpu_blr:gpu_stl:gpu_kron:gpu_ks:gpu_factorize}" all
  run_tests gpu_blr blr-tuned STROP_TUNE=1
  ;;
final)
  run_tests "${SUITES:-gpu_gemm_tuning:gpu_blr:gpu_stl:gpu_kron:gpu_ks:gpu_factorize}" all
  run_tests gpu_blr blr-tuned STROP_TUNE=1
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-120}
  bench graph --graph --batches "${BATCHES:-1,2,3,4,8,16}"
  bench call --batches "${BATCHES:-1,2,3,4,8,16}"
  ;;
padded)
  run_tests gpu_blr blr
  run_tests gpu_blr blr-tuned STROP_TUNE=1
  BENCH_TIMEOUT=${BENCH_TIMEOUT:-120}
  bench graph --graph --batches "${BATCHES:-1,2,3,4,5,6,7,8}"
  bench call --batches "${BATCHES:-1,2,3,4,5,6,7,8}"
  ;;
bench)
  [ "${TESTS:-0}" = 1 ] && run_tests "${SUITES:-gpu_blr}" blr
  bench graph --graph --batches "${BATCHES:-1,2,4,8,16,128,1024,4096}"
  summarize "$out/blr16-bench$tag-graph-$dev.csv"
  bench call --batches "${BATCHES:-1,2,4,8,16,128,1024,4096}"
  summarize "$out/blr16-bench$tag-call-$dev.csv"
  ;;
esac
