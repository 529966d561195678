#!/usr/bin/env bash
# Session 57's GPU call, binaries built here by carry-build.sh and carried:
# build-final/main (this tree: the triple16 kernel for three 16 x 16 factors in 16 bits) and
# build-final/patched (plus bench/probes/kron-merge16-untested.patch: 16-bit runs of small
# factors merged up to 512 x 512); build-final/lc2 and lc1: kron_bench of main with the triple
# kernel's clusters capped at 4 and 2 CTAs (kron_triple16_log_cluster returning at most 2, 1).
#   1. gpu_kron with the patched tests (the triple16 case first);
#   2. kron_bench --auto-only on 8^6, 16^5, 8^8 and 16^6 with main and patched, on 16^5 and
#      16^6 with lc2 and lc1;
#   3. when the triple16 case passed, the full benchmark with the patched binary.
# Everything lands in OUT/kron-session57.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
{
  echo "== triples"
  $b/patched/strop_gpu_tests --run_test=gpu_kron/triples_of_16_factors_in_16_bits \
    --report_level=short --log_level=error 2>&1 | tail -20
  triples=${PIPESTATUS[0]}
  echo "triples exit $triples at $(elapsed) s"
  echo "== gpu_kron"
  $b/patched/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 |
    tail -12
  echo "gpu_kron done at $(elapsed) s"
} >"$w/tests.log" 2>&1
for v in main patched; do
  $b/$v/kron_bench --auto-only --no-table4 --reps 20 --only 8^6,16^5,8^8,16^6 \
    --csv "$w/kron-auto-$v.csv" --json "$w/kron-auto-$v.json" >"$w/kron-auto-$v.log" 2>&1
  echo "auto $v done at $(elapsed) s" >>"$w/tests.log"
done
for v in lc2 lc1; do
  $b/$v/kron_bench --auto-only --no-table4 --reps 20 --only 16^5,16^6 \
    --csv "$w/kron-auto-$v.csv" --json "$w/kron-auto-$v.json" >"$w/kron-auto-$v.log" 2>&1
  echo "auto $v done at $(elapsed) s" >>"$w/tests.log"
done
if grep -q "^triples exit 0" "$w/tests.log"; then
  timeout 220 $b/patched/kron_bench --reps 20 --rowmajor --csv "$w/kron-bench-session57-$device.csv" \
    --json "$w/kron-summary-session57-$device.json" >"$w/kron-full.log" 2>&1
  echo "full exit $? at $(elapsed) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  for v in main patched lc2 lc1; do
    echo "== auto $v"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
      "$w/kron-auto-$v.csv"
  done
  kron_rows
  cat "$w"/kron-summary-session57-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/kron-session57.tar.gz" -C "$w" .
rm -rf "$w"
