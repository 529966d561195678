#!/usr/bin/env bash
# The BLR runs on one H100/H200 (sessions 48 and 49), one call under the device's 10 minutes:
#   bash bench/probes/blr-run.sh OUT
# builds strop_gpu_tests and blr_bench in build-final (sm_90), or takes them from
# build-carry/bins.tar.gz (stripped binaries built here from the same tree, passed with
# run's `carry`: it saves the device about 200 s of build) when they start there; runs gpu_blr,
# blr_bench per call at B = 1 and 1024 and, with GRAPH=1, replayed from a CUDA graph at B = 1024,
# with COLD=1 per call at B = 1 with the L2 evicted before each call (blr_bench --cold), then
# racecheck on the in-place Kron kernel's one/two-signal case (RACECHECK=kron), no sanitizer
# (RACECHECK=none) or memcheck and racecheck on the strided-copy case (the default;
# SANITIZE_CASES names other cases, ':' between them), with COUPLING_BATCHES the Llama layers'
# coupling rows at those token counts, with NCU_DETAIL one kernel's ncu sections, and every
# kernel of the calls of NCU_LAYERS at B = 1024 under ncu (blr-stages-*.txt). TAG names the
# files; BLR_TESTS (default gpu_blr) the cases run; BATCHES (default 1,1024) and GRAPH_BATCHES
# (default 1024) the token counts of the per-call and replayed benchmarks.
# Few files come back from OUT (at most 8): the build log, the fp32 CSVs, the benchmarks' logs,
# the sanitizers' logs and the ncu stages go into OUT/TAG-extra.tar.gz.
set -uo pipefail
out=${1:?OUT}
tag=${TAG:-blr}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
start=$(date +%s)
x=$(mktemp -d)  # the files packed into OUT/TAG-extra.tar.gz
since() { echo "$(($(date +%s) - start)) s"; }
# Seconds left before LIMIT (default 570 s), the most a step may take (the pack at the end
# must run).
left() { local l=$((${LIMIT:-570} - ($(date +%s) - start))); echo $((l < 1 ? 1 : l < $1 ? l : $1)); }
# Carried binaries: bins.tar.gz holds tests/strop_gpu_tests and bench/blr_bench.
if [ -f build-carry/bins.tar.gz ]; then
  mkdir -p build-final && tar xzf build-carry/bins.tar.gz -C build-final &&
    ! ldd ./build-final/tests/strop_gpu_tests | grep -q 'not found' &&
    ./build-final/bench/blr_bench --help >/dev/null 2>&1 && carried=1
fi
if [ "${carried:-0}" = 1 ]; then
  echo "carried binaries start: no build"
else
  cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_CHECK_SM80=OFF -DSTROP_BUILD_BENCH=ON -DSTROP_BUILD_EXAMPLES=OFF \
    -DSTROP_BUILD_GPU_TESTS=ON >"$x/build-$dev.log" 2>&1
  cmake --build build-final -j 16 --target strop_gpu_tests blr_bench >>"$x/build-$dev.log" 2>&1 ||
    { echo "build failed"; tail -30 "$x/build-$dev.log"; exit 1; }
  echo "built in $(since)"
fi
tests=./build-final/tests/strop_gpu_tests
$tests --run_test="${BLR_TESTS:-gpu_blr}" --report_level=short --log_level=error >"$out/gpu-blr-$tag-$dev.log" 2>&1
echo "gpu_blr exit $? ($(since))"; tail -4 "$out/gpu-blr-$tag-$dev.log"
timeout $(left 200) ./build-final/bench/blr_bench --batches "${BATCHES:-1,1024}" --csv "$x/blr-bench-$tag-$dev.csv" \
  --csv16 "$out/blr16-bench-$tag-$dev.csv" \
  --json "$out/blr-summary-$tag-$dev.json" >"$x/blr-bench-$tag-$dev.log" 2>&1
echo "blr_bench exit $? ($(since))"
if [ "${GRAPH:-0}" = 1 ]; then
  timeout $(left 200) ./build-final/bench/blr_bench --graph --batches "${GRAPH_BATCHES:-1024}" \
    --csv "$x/blr-bench-$tag-graph-$dev.csv" --csv16 "$out/blr16-bench-$tag-graph-$dev.csv" \
    --json "$out/blr-summary-$tag-graph-$dev.json" >"$x/blr-bench-$tag-graph-$dev.log" 2>&1
  echo "blr_bench --graph exit $? ($(since))"
fi
if [ "${COLD:-0}" = 1 ]; then
  timeout $(left 120) ./build-final/bench/blr_bench --cold --batches 1 \
    --csv "$x/blr-bench-$tag-cold-$dev.csv" --csv16 "$out/blr16-bench-$tag-cold-$dev.csv" \
    --json "$out/blr-summary-$tag-cold-$dev.json" >"$x/blr-bench-$tag-cold-$dev.log" 2>&1
  echo "blr_bench --cold exit $? ($(since))"
fi
sanitize() {  # TOOL NAME CASE
  timeout "$(left 120)" compute-sanitizer --tool "$1" --error-exitcode 86 --print-limit 40 \
    $tests --run_test="$3" --report_level=short >"$x/$1.log" 2>&1
  echo "$1 $2 exit $? ($(since))"; tail -3 "$x/$1.log"
  cat "$x/$1.log" >>"$x/sanitize-$2-$tag-$dev.log"
}
case "${RACECHECK:-copies}" in
  none) echo "no sanitizer run" ;;
  kron) sanitize racecheck kron-square 'gpu_kron/equal_square_factors_on_one_or_two_signals*' ;;
  *)
    cases=${SANITIZE_CASES:-gpu_blr/strided_copies_match_a_loop*}
    sanitize memcheck copies "$cases"
    sanitize racecheck copies "$cases"
    ;;
esac
# COUPLING_BATCHES (e.g. 128,4096): blr_bench on the Llama layers (b = 16) at those token
# counts, for their coupling rows (blr16-bench-TAG-coupling-DEV.csv in the extra tar).
if [ -n "${COUPLING_BATCHES:-}" ]; then
  timeout $(left 90) ./build-final/bench/blr_bench --batches "$COUPLING_BATCHES" --layer Llama \
    --csv /dev/null --csv16 "$x/blr16-bench-$tag-coupling-$dev.csv" --json /dev/null \
    >"$x/blr-bench-$tag-coupling-$dev.log" 2>&1
  echo "blr_bench coupling batches exit $? ($(since))"
fi
# NCU_DETAIL (a kernel-name regex): ncu's throughput, memory, occupancy and warp-state sections
# for the first two launches of that kernel in NCU_DETAIL_LAYER (default Llama-7B/qkvo) at
# B = 1024 (ncu-detail-TAG-DEV.txt in the extra tar).
if [ -n "${NCU_DETAIL:-}" ]; then
  timeout $(left 120) ncu --clock-control none --kernel-name "regex:$NCU_DETAIL" --launch-count 2 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis_Tables \
    ./build-final/bench/blr_bench --reps 1 --batches 1024 --layer "${NCU_DETAIL_LAYER:-Llama-7B/qkvo}" \
    --csv /dev/null --csv16 /dev/null --json /dev/null >"$x/ncu-detail-$tag-$dev.txt" 2>&1
  echo "ncu detail exit $? ($(since))"
fi
# NCU_LAYERS (default Llama-7B/qkvo): the layers whose kernels are listed, one after another in
# blr-stages-TAG-DEV.txt (in the extra tar).
for layer in ${NCU_LAYERS:-Llama-7B/qkvo}; do
  timeout $(left 150) ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    ./build-final/bench/blr_bench --reps 1 --batches 1024 --layer "$layer" \
    --csv /dev/null --csv16 /dev/null --json /dev/null >"$x/stages.csv" 2>/dev/null
  { echo "## $layer, B = 1024"; python3 bench/probes/ncu_kernel_times.py "$x/stages.csv"; } \
    >>"$x/blr-stages-$tag-$dev.txt"
done
rm -f "$x/stages.csv"
echo "ncu done ($(since))"
cat "$out"/*summary*.json
tar czf "$out/$tag-extra.tar.gz" -C "$x" .
