#!/usr/bin/env bash
# Session 48 on one H100/H200, one call under the device's 10 minutes:
#   bash bench/probes/session48-run.sh OUT
# builds strop_gpu_tests and blr_bench in build-final (sm_90), runs gpu_blr (the baselines'
# transposes in tiles of 16-byte vectors), blr_bench per call at B = 1 and 1024 and, with
# GRAPH=1, replayed from a CUDA graph at B = 1024, then racecheck on the in-place Kron kernel's
# one/two-signal case (RACECHECK=kron) or memcheck and racecheck on the strided-copy case
# (RACECHECK=copies, the default), and every kernel of the Llama-7B qkvo calls at B = 1024 under
# ncu (OUT/blr-stages-*.txt). (Runs v1 and v2 ran the sanitizer and ncu before the benchmark.) TAG names the files; BLR_TESTS (default gpu_blr) the cases run.
# Few files come back from OUT: the build log, the fp32 CSVs and the benchmarks' logs go into
# OUT/TAG-extra.tar.gz.
set -uo pipefail
out=${1:?OUT}
tag=${TAG:-session48}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
start=$(date +%s)
x=$(mktemp -d)  # the files packed into OUT/TAG-extra.tar.gz
since() { echo "$(($(date +%s) - start)) s"; }
# Seconds left before LIMIT (default 570 s), the most a step may take (the pack at the end
# must run).
left() { local l=$((${LIMIT:-570} - ($(date +%s) - start))); echo $((l < 1 ? 1 : l < $1 ? l : $1)); }
cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_CHECK_SM80=OFF -DSTROP_BUILD_BENCH=ON -DSTROP_BUILD_EXAMPLES=OFF \
  -DSTROP_BUILD_GPU_TESTS=ON >"$x/build-$dev.log" 2>&1
cmake --build build-final -j 16 --target strop_gpu_tests blr_bench >>"$x/build-$dev.log" 2>&1 ||
  { echo "build failed"; tail -30 "$x/build-$dev.log"; exit 1; }
echo "built in $(since)"
tests=./build-final/tests/strop_gpu_tests
$tests --run_test="${BLR_TESTS:-gpu_blr}" --report_level=short --log_level=error >"$out/gpu-blr-$tag-$dev.log" 2>&1
echo "gpu_blr exit $? ($(since))"; tail -4 "$out/gpu-blr-$tag-$dev.log"
timeout $(left 200) ./build-final/bench/blr_bench --batches 1,1024 --csv "$x/blr-bench-$tag-$dev.csv" \
  --csv16 "$out/blr16-bench-$tag-$dev.csv" \
  --json "$out/blr-summary-$tag-$dev.json" >"$x/blr-bench-$tag-$dev.log" 2>&1
echo "blr_bench exit $? ($(since))"
if [ "${GRAPH:-0}" = 1 ]; then
  timeout $(left 200) ./build-final/bench/blr_bench --graph --batches 1024 \
    --csv "$x/blr-bench-$tag-graph-$dev.csv" --csv16 "$out/blr16-bench-$tag-graph-$dev.csv" \
    --json "$out/blr-summary-$tag-graph-$dev.json" >"$x/blr-bench-$tag-graph-$dev.log" 2>&1
  echo "blr_bench --graph exit $? ($(since))"
fi
sanitize() {  # TOOL NAME CASE
  timeout "$(left 120)" compute-sanitizer --tool "$1" --error-exitcode 86 --print-limit 40 \
    $tests --run_test="$3" --report_level=short >"$x/$1.log" 2>&1
  echo "$1 $2 exit $? ($(since))"; tail -3 "$x/$1.log"
  cat "$x/$1.log" >>"$out/sanitize-$2-$tag-$dev.log"
}
if [ "${RACECHECK:-copies}" = kron ]; then
  sanitize racecheck kron-square 'gpu_kron/equal_square_factors_on_one_or_two_signals*'
else
  sanitize memcheck copies 'gpu_blr/strided_copies_match_a_loop*'
  sanitize racecheck copies 'gpu_blr/strided_copies_match_a_loop*'
fi
timeout $(left 150) ncu --clock-control none --metrics gpu__time_duration.sum --csv \
  ./build-final/bench/blr_bench --reps 1 --batches 1024 --layer Llama-7B/qkvo \
  --csv /dev/null --csv16 /dev/null --json /dev/null >"$out/stages.csv" 2>/dev/null
python3 bench/probes/ncu_kernel_times.py "$out/stages.csv" >"$out/blr-stages-$tag-llama7b-qkvo-b1024-$dev.txt"
rm -f "$out/stages.csv"
echo "ncu done ($(since))"
cat "$out"/*summary*.json
tar czf "$out/$tag-extra.tar.gz" -C "$x" .
