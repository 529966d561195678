#!/usr/bin/env bash
# Session 26's GPU calls (the decode kernel's folded BLAST coupling): build, the test suites
# named by SUITES (default gpu_blr; '*' for all), then blr_bench at BATCHES (default the
# decode batches) replayed from graphs and per call, into OUT with TAG in the file names.
#   TAG=-session26-fold bash bench/probes/session26-run.sh OUT
#   SUITES='*' BATCHES=1,2,4,8,16,128,1024,4096 TAG=-session26-final bash ... OUT
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session26}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target ${TARGETS:-strop_gpu_tests blr_bench} 2>&1 |
  grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - start)) s"
if [ "${SUITES:-gpu_blr}" != none ]; then
  timeout ${TEST_TIMEOUT:-400} ./build-gpu/tests/strop_gpu_tests --run_test="${SUITES:-gpu_blr}" \
    --report_level=short --log_level=error >"$out/gpu-tests$tag-$dev.log" 2>&1
  echo "gpu tests exit code: $?" | tee -a "$out/gpu-tests$tag-$dev.log"
  tail -6 "$out/gpu-tests$tag-$dev.log"
fi
batches=${BATCHES:-1,2,4,8}
timeout ${GRAPH_TIMEOUT:-200} ./build-gpu/bench/blr_bench --graph --reps 20 --batches "$batches" --csv /dev/null \
  --csv16 "$out/blr16-bench$tag-graph-$dev.csv" --json "$out/blr-summary$tag-graph-$dev.json" \
  >/dev/null 2>&1
echo "graph exit code: $?"
timeout ${CALL_TIMEOUT:-250} ./build-gpu/bench/blr_bench --reps 20 --batches "$batches" --csv /dev/null \
  --csv16 "$out/blr16-bench$tag-$dev.csv" --json "$out/blr-summary$tag-$dev.json" \
  >"$out/blr$tag-$dev.log" 2>&1
echo "per call exit code: $?"
for f in "$out"/blr16-bench$tag-graph-$dev.csv "$out"/blr16-bench$tag-$dev.csv; do
  echo "== $f (B = 1, us: Llama-7B decode rows)"
  awk -F, '$8 == 1 && $1 == "Llama-7B" && $5 ~ /decode|plan$|unfused/ {
    printf "%s %s %s %.1f (dense %.1f)\n", $2, $5, $8, $9 * 1e6, $10 * 1e6 }' "$f"
done
