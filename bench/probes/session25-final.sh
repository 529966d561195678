#!/usr/bin/env bash
# Session 25's final GPU call: every GPU test suite, then blr_bench per call and replayed from
# graphs (the session-19 commands), into OUT. PART=tests or PART=bench runs one half.
set -uo pipefail
out=${1:?OUT}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target ${TARGETS:-strop_gpu_tests blr_bench} 2>&1 | grep -E "error|warning" | head
echo "build: $(($(date +%s) - start)) s"
if [ "${PART:-tests}" = tests ]; then
  timeout 400 ./build-gpu/tests/strop_gpu_tests --report_level=short --log_level=error \
    >"$out/gpu-tests-session25-final-$dev.log" 2>&1
  echo "gpu tests exit code: $?" | tee -a "$out/gpu-tests-session25-final-$dev.log"
  tail -6 "$out/gpu-tests-session25-final-$dev.log"
fi
if [ "${PART:-tests}" = bench ]; then
  timeout 280 ./build-gpu/bench/blr_bench --reps 20 --batches 1,2,4,8,16,128,1024,4096 \
    --csv "$out/blr-bench-session25-$dev.csv" --csv16 "$out/blr16-bench-session25-$dev.csv" \
    --json "$out/blr-summary-session25-$dev.json" >"$out/blr-session25-$dev.log" 2>&1
  echo "per call exit code: $?"
  cat "$out/blr-summary-session25-$dev.json"
  timeout 200 ./build-gpu/bench/blr_bench --graph --reps 20 --batches 1,2,4,8,16,128,1024 \
    --csv /dev/null --csv16 "$out/blr16-bench-session25-graph-$dev.csv" \
    --json "$out/blr-summary-session25-graph-$dev.json" >/dev/null 2>&1
  echo "graph exit code: $?"
  cat "$out/blr-summary-session25-graph-$dev.json"
fi
