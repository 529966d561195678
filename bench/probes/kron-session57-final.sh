#!/usr/bin/env bash
# Session 57's second GPU call (NOT RUN: no machine started before the device time ran out),
# binaries built here by `bash bench/probes/carry-build.sh bench/probes/kron-triple16-two-warps.patch`
# and carried:
# build-final/main (this tree: the triple16 kernel with clusters of at most 2 CTAs, 16-bit
# merges up to 512 x 512) and build-final/patched (plus
# bench/probes/kron-triple16-two-warps.patch: 16 warps, two per chunk).
#   1. gpu_kron with main; the triple16 case with patched;
#   2. kron_bench --auto-only on 16^5 with both binaries;
#   3. the full benchmark with main (unless FULL=0).
# Everything lands in OUT/kron-session57-final.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
{
  echo "== gpu_kron main"
  $b/main/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 |
    tail -30
  echo "gpu_kron done at $(elapsed) s"
  echo "== triples patched"
  $b/patched/strop_gpu_tests --run_test=gpu_kron/triples_of_16_factors_in_16_bits \
    --report_level=short --log_level=error 2>&1 | tail -12
  echo "triples patched done at $(elapsed) s"
} >"$w/tests.log" 2>&1
for v in main patched; do
  $b/$v/kron_bench --auto-only --no-table4 --reps 20 --only 16^5 \
    --csv "$w/kron-auto-$v.csv" --json "$w/kron-auto-$v.json" >"$w/kron-auto-$v.log" 2>&1
  echo "auto $v done at $(elapsed) s" >>"$w/tests.log"
done
if [ "${FULL:-1}" = 1 ]; then
  timeout 220 $b/main/kron_bench --reps 20 --rowmajor --csv "$w/kron-bench-session57-final-$device.csv" \
    --json "$w/kron-summary-session57-final-$device.json" >"$w/kron-full.log" 2>&1
  echo "full exit $? at $(elapsed) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  for v in main patched; do
    echo "== auto $v"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
      "$w/kron-auto-$v.csv"
  done
  echo "== full, 16-bit rows"
  awk -F, '$1 ~ /table/ && ($4 == "float16" || $4 == "bfloat16") {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
    "$w"/kron-bench-session57-final-*.csv 2>/dev/null
  cat "$w"/kron-summary-session57-final-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/kron-session57-final.tar.gz" -C "$w" .
rm -rf "$w"
