#!/usr/bin/env bash
# Session 58's second GPU call: the signal-cluster pass (kron_signal_cluster.cu), binaries built
# here and carried: build-final/main (strop_gpu_tests, kron_bench of this tree) and
# build-final/before (kron_bench of 9b0c6c4, before the pass).
#   1. the new GPU case, then all of gpu_kron;
#   2. kron_bench --auto-only on 8^6 with both binaries, alternated twice;
#   3. ncu of the new kernel (PROFILE=1), then the full benchmark (FULL=1).
# Everything lands in OUT/session58-cluster.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
{
  echo "== cluster case"
  $b/main/strop_gpu_tests --run_test=gpu_kron/six_factors_of_8_on_whole_signals_in_a_cluster \
    --report_level=short --log_level=error 2>&1 | tail -12
  echo "cluster case done at $(elapsed) s"
  echo "== gpu_kron"
  $b/main/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 |
    tail -12
  echo "gpu_kron done at $(elapsed) s"
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
  timeout 120 ncu --kernel-name regex:signal_cluster --launch-count 1 --set detailed \
    $b/main/kron_bench --auto-only --no-table4 --reps 1 --only 8^6 \
    --csv "$w/ncu-bench.csv" --json "$w/ncu-bench.json" >"$w/ncu-signal-cluster.txt" 2>&1
  echo "ncu exit $? at $(elapsed) s" >>"$w/tests.log"
fi
if [ "${FULL:-1}" = 1 ]; then
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
  grep -E "Duration|DRAM Throughput|Memory Throughput|Registers|Achieved Occupancy|Compute \(SM\)" \
    "$w/ncu-signal-cluster.txt" 2>/dev/null | head -20
  echo "== full, float and double rows"
  awk -F, '$1 ~ /table[13]/ {printf "%s %s %s auto=%.3f ms frac=%.3f err=%s\n", $2, $3, $4, $6 * 1e3, 1 / $16, $18}' \
    "$w"/kron-bench-session58-cluster-*.csv 2>/dev/null
  cat "$w"/kron-summary-session58-cluster-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/session58-cluster.tar.gz" -C "$w" .
rm -rf "$w"
