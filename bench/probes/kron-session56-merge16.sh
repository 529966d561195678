#!/usr/bin/env bash
# A check of bench/probes/kron-merge16-untested.patch (16-bit plans that merge runs of small
# factors up to 512 x 512), written in session 56 and not yet run. Build here with
# `bash bench/probes/carry-build.sh bench/probes/kron-merge16-untested.patch`, carry
# build-carry/bins.tar.gz, unpack it into build-final/ and run this with OUT: the 16-bit
# gpu_kron cases with the patched tests, then kron_bench --auto-only on 8^6 and 8^8 with the
# patched binary and main's (half and bfloat16 rows change; float and double must not).
# Everything lands in OUT/kron-merge16.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
cases='gpu_kron/half_and_bfloat16_signals,sixteen_bit_engine_with_every_algorithm_and_a_workspace'
cases+=',pairs_of_32_factors_in_16_bits'
{
  echo "== tests $cases"
  $b/patched/strop_gpu_tests --run_test="$cases" --report_level=short --log_level=error 2>&1 |
    tail -3
  for v in patched main; do
    $b/$v/kron_bench --auto-only --no-table4 --reps 20 --only 8^6,8^8 \
      --csv "$w/kron-merge16-$v.csv" --json "$w/kron-merge16-$v.json" >"$w/kron-merge16-$v.log" 2>&1
    echo "== $v"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
      "$w/kron-merge16-$v.csv"
  done
} >"$out/summary.txt" 2>&1
cp "$out/summary.txt" "$w/"
tar czf "$out/kron-merge16.tar.gz" -C "$w" .
rm -rf "$w"
