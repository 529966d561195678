#!/usr/bin/env bash
# Session 28's GPU calls: GEMM algorithms tuned by measurement (src/runtime/strided_gemm.hpp).
#   PART=tests bash bench/probes/session28-run.sh OUT  # build; gpu_gemm_tuning and the suites
#       whose cuBLAS products go through the tuned call (SUITES), then the same with STROP_TUNE=1
#       (TUNED_SUITES): every operator test then runs cuBLASLt's chosen algorithms
#   PART=bench bash bench/probes/session28-run.sh OUT  # build; blr_bench --tune, graph replay
#       and per call, at BATCHES (default 1,16,128,1024,4096)
#   PART=all: both, one build
#   PART=engines TARGETS='stl_bench kron_bench' bash bench/probes/session28-run.sh OUT
#       stl_bench (n = 8192, 16384, r = 32, half) and kron_bench (Auto, Table 1) with tuning off
#       and on (STROP_TUNE=1: the Kron plan and every GEMM's algorithm measured), one run
#       after the other
#   PART=stl-tune TARGETS=stl_bench bash bench/probes/session28-run.sh OUT
#       stl_bench --tune: each layer untuned and tuned in alternation (n = 8192, 16384)
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session28}
source "$(dirname "$0")/probe-build.sh"
if [ "${PART:-tests}" = stl-tune ]; then
  timeout ${STL_TIMEOUT:-120} ./build-gpu/bench/stl_bench --tune --sizes 8192,16384 \
    --ranks 16,32,49 --dtypes half,bf16 --reps 10 --batches "" \
    --csv "$out/stl-bench$tag-tune-$dev.csv" --json /dev/null >"$out/stl-tune$tag-$dev.log" 2>&1
  echo "stl_bench --tune: exit code $?"
  grep "tuned layer" "$out/stl-tune$tag-$dev.log"
  exit 0
fi
if [ "${PART:-tests}" = engines ]; then
  for tune in 0 1; do
    start=$(date +%s)
    STROP_TUNE=$tune timeout ${STL_TIMEOUT:-70} ./build-gpu/bench/stl_bench --sizes 8192,16384 \
      --ranks 32 --dtypes half --reps 10 --batches "" \
      --csv "$out/stl-bench$tag-tune$tune-$dev.csv" --json /dev/null >/dev/null 2>&1
    echo "stl_bench, STROP_TUNE=$tune: exit code $? ($(($(date +%s) - start)) s)"
    start=$(date +%s)
    STROP_TUNE=$tune timeout ${KRON_TIMEOUT:-80} ./build-gpu/bench/kron_bench --auto-only \
      --only table1 --no-table4 --reps 10 --csv "$out/kron-bench$tag-tune$tune-$dev.csv" \
      --json /dev/null >/dev/null 2>&1
    echo "kron_bench, STROP_TUNE=$tune: exit code $? ($(($(date +%s) - start)) s)"
  done
  head -50 "$out"/stl-bench$tag-tune*-$dev.csv "$out"/kron-bench$tag-tune*-$dev.csv | cut -c1-220
  exit 0
fi
if [ "${PART:-tests}" != bench ]; then
  start=$(date +%s)
  timeout ${TEST_TIMEOUT:-300} $tests \
    --run_test="${SUITES:-gpu_gemm_tuning:gpu_blr:gpu_stl:gpu_kron:gpu_ks:gpu_factorize}" \
    --report_level=short --log_level=error >"$out/gpu-tests$tag-$dev.log" 2>&1
  echo "gpu tests exit code: $? ($(($(date +%s) - start)) s)" | tee -a "$out/gpu-tests$tag-$dev.log"
  tail -5 "$out/gpu-tests$tag-$dev.log"
  start=$(date +%s)
  STROP_TUNE=1 timeout ${TUNED_TIMEOUT:-240} $tests \
    --run_test="${TUNED_SUITES:-gpu_blr:gpu_stl:gpu_kron:gpu_ks}" \
    --report_level=short --log_level=error >"$out/gpu-tests$tag-tuned-$dev.log" 2>&1
  echo "gpu tests, STROP_TUNE=1, exit code: $? ($(($(date +%s) - start)) s)" |
    tee -a "$out/gpu-tests$tag-tuned-$dev.log"
  tail -5 "$out/gpu-tests$tag-tuned-$dev.log"
  [ "${PART:-tests}" = tests ] && exit 0
fi
batches=${BATCHES:-1,16,128,1024,4096}
start=$(date +%s)
timeout ${GRAPH_TIMEOUT:-240} ./build-gpu/bench/blr_bench --graph --tune --reps 20 \
  --batches "$batches" --csv /dev/null --csv16 "$out/blr16-bench$tag-tuned-graph-$dev.csv" \
  --json /dev/null >/dev/null 2>&1
echo "blr graph: exit code $? ($(($(date +%s) - start)) s)"
start=$(date +%s)
timeout ${CALL_TIMEOUT:-240} ./build-gpu/bench/blr_bench --tune --reps 20 --batches "$batches" \
  --csv /dev/null --csv16 "$out/blr16-bench$tag-tuned-$dev.csv" --json /dev/null >/dev/null 2>&1
echo "blr per call: exit code $? ($(($(date +%s) - start)) s)"
for f in "$out"/blr16-bench$tag-tuned-graph-$dev.csv "$out"/blr16-bench$tag-tuned-$dev.csv; do
  echo "== $f: tuned / untuned time, by structure (median, min, max over layers and batches)"
  python3 - "$f" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))][1:]
t = {(r[0], r[1], r[4], r[7]): float(r[8]) for r in rows}
for kind in ('lowrank', 'monarch', 'blast', 'dense'):
    base = kind + ('_untuned' if kind == 'dense' else '_plan_cublas')
    ratios = [v / t[(m, l, base, b)] for (m, l, s, b), v in t.items()
              if s == kind + ('_tuned' if kind == 'dense' else '_plan_cublas_tuned')
              and (m, l, base, b) in t]
    if ratios:
        print(f"{kind}: {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), {len(ratios)} rows")
for key in [k for k in t if k[0] == 'Llama-7B' and k[3] == '1024' and ('plan_cublas' in k[2] or 'dense' in k[2])]:
    print(key, f"{t[key]*1e6:.1f} us")
PY
done
