#!/usr/bin/env bash
# Session 58's GPU calls for the signal-cluster pass (kron_signal_cluster.cu: v1 in the second
# call, v2 in the third), binaries built here and carried: build-final/main (strop_gpu_tests,
# kron_bench with the pass) and build-final/before (kron_bench of d89d3ab, without it). The pass is
# not on main: build `main` with bench/probes/kron-signal-cluster-v2-untested.patch applied (v1:
# kron-signal-cluster-tried.patch).
#   1. the new GPU case, then all of gpu_kron (unless ALL_KRON=0);
#   2. kron_bench --auto-only on 8^6 with both binaries, alternated twice;
#   3. ncu of the new kernel (PROFILE=1), then the full benchmark (FULL=1; FULL=auto: only
#      where the pass made float 8^6 faster in both rounds).
# Everything lands in OUT/session58-cluster.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
{
  echo "== cluster case"
  $b/main/strop_gpu_tests --run_test=gpu_kron/six_factors_of_8_on_whole_signals_in_a_cluster \
    --report_level=short --log_level=error 2>&1 | tail -12
  echo "cluster case done at $(elapsed) s"
  if [ "${ALL_KRON:-1}" = 1 ]; then
    echo "== gpu_kron"
    $b/main/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 |
      tail -12
    echo "gpu_kron done at $(elapsed) s"
  fi
} >"$w/tests.log" 2>&1
for round in 1 2; do
  for v in before main; do
    $b/$v/kron_bench --auto-only --no-table4 --reps 20 --only 8^6 \
      --csv "$w/kron-auto-$v-$round.csv" --json "$w/kron-auto-$v-$round.json" \
      >"$w/kron-auto-$v-$round.log" 2>&1
    echo "auto $v $round done at $(elapsed) s" >>"$w/tests.log"
  done
done
if [ "${PROFILE:-1}" = 1 ]; then
  timeout 120 ncu --kernel-name regex:signal_cluster --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $b/main/kron_bench --auto-only --no-table4 --reps 1 --only 8^6 \
    --csv "$w/ncu-bench.csv" --json "$w/ncu-bench.json" >"$w/ncu-signal-cluster.txt" 2>&1
  echo "ncu exit $? at $(elapsed) s" >>"$w/tests.log"
fi
float_86() { awk -F, '$2 == "8^6" && $4 == "float32" {print $6}' "$1"; }
faster=1
for r in 1 2; do
  awk -v m="$(float_86 "$w/kron-auto-main-$r.csv")" -v b="$(float_86 "$w/kron-auto-before-$r.csv")" \
    'BEGIN {exit !(m < b)}' || faster=0
done
echo "float 8^6 faster in both rounds: $faster" >>"$w/tests.log"
if [ "${FULL:-1}" = 1 ] || { [ "${FULL:-1}" = auto ] && [ $faster = 1 ]; }; then
  timeout 220 $b/main/kron_bench --reps 20 --rowmajor \
    --csv "$w/kron-bench-session58-cluster-$device.csv" \
    --json "$w/kron-summary-session58-cluster-$device.json" >"$w/kron-full.log" 2>&1
  echo "full exit $? at $(elapsed) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  for f in "$w"/kron-auto-*.csv; do
    echo "== $(basename "$f")"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' "$f"
  done
  grep -E "Duration|DRAM Throughput|Registers|Achieved Occupancy|Compute \(SM\)|Issued Ipc|Stall|Eligible|Warp Cycles" \
    "$w/ncu-signal-cluster.txt" 2>/dev/null | head -30
  echo "== full, float and double rows"
  awk -F, '$1 ~ /table[13]/ {printf "%s %s %s auto=%.3f ms frac=%.3f err=%s\n", $2, $3, $4, $6 * 1e3, 1 / $16, $18}' \
    "$w"/kron-bench-session58-cluster-*.csv 2>/dev/null
  cat "$w"/kron-summary-session58-cluster-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/session58-cluster.tar.gz" -C "$w" .
rm -rf "$w"
