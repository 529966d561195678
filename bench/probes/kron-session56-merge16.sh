#!/usr/bin/env bash
# Session 56's check of 16-bit plans that merge runs of small factors up to 512 x 512,
# binaries built here and carried: build-final/{tests,bench} (this tree) and
# build-final/before/kron_bench (merges up to 256 x 256). Runs the 16-bit gpu_kron cases, then
# kron_bench --auto-only on 8^6 and 8^8 with each binary (half and bfloat16 rows change).
# Everything lands in OUT/kron-session56-merge16.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
cases='gpu_kron/half_and_bfloat16_signals,sixteen_bit_engine_with_every_algorithm_and_a_workspace'
cases+=',pairs_of_32_factors_in_16_bits'
{
  echo "== tests $cases"
  $b/tests/strop_gpu_tests --run_test="$cases" --report_level=short --log_level=error 2>&1 |
    tail -3
  for v in after before; do
    bin=$b/bench/kron_bench
    [ $v = before ] && bin=$b/before/kron_bench
    $bin --auto-only --no-table4 --reps 20 --only 8^6,8^8 --csv "$w/kron-merge16-$v.csv" \
      --json "$w/kron-merge16-$v.json" >"$w/kron-merge16-$v.log" 2>&1
    echo "== $v"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
      "$w/kron-merge16-$v.csv"
  done
} >"$out/summary.txt" 2>&1
tar czf "$out/kron-session56-merge16.tar.gz" -C "$w" . "$out/summary.txt" 2>/dev/null
rm -rf "$w"
