#!/usr/bin/env bash
# Session 58's first GPU call, binaries built here by
#   TARGETS="kron_bench strop_gpu_tests blr_bench" bash bench/probes/carry-build.sh \
#     bench/probes/kron-triple16-two-warps.patch
# and carried (build-final/main: this tree; build-final/patched: plus the two-warp patch):
#   1. gpu_kron with main (the pair and triple kernels through run_fused16_units), the triple
#      case with patched;
#   2. kron_bench --auto-only on 16^5 with both binaries;
#   3. blr_bench replayed from CUDA graphs with --token-groups 2,4,8 on Llama-7B at 1024 and 4096
#      tokens, then every layer at 1024 (within BLR_LIMIT seconds, default 200).
# Everything lands in OUT/session58.tar.gz and OUT/summary.txt.
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
blr() { # NAME ARGS...: blr_bench replayed, token groups 2, 4, 8
  local name=$1
  shift
  timeout "${BLR_LIMIT:-200}" $b/main/blr_bench --graph --reps 10 --token-groups 2,4,8 \
    --csv "$w/blr-bench-$name-$device.csv" --csv16 "$w/blr16-bench-$name-$device.csv" \
    --json "$w/blr-summary-$name-$device.json" "$@" >"$w/blr-$name.log" 2>&1
  echo "blr $name exit $? at $(elapsed) s" >>"$w/tests.log"
}
blr llama7b --layer Llama-7B --batches 1024,4096
blr all --batches 1024
{
  cat "$w/device.txt" "$w/tests.log"
  for v in main patched; do
    echo "== auto $v"
    awk -F, '$1 ~ /table/ {printf "%s %s %s auto=%.3f ms err=%s\n", $2, $3, $4, $6 * 1e3, $18}' \
      "$w/kron-auto-$v.csv"
  done
  for f in "$w"/blr16-bench-*.csv; do
    echo "== $(basename "$f")"
    awk -F, '$5 ~ /^(monarch|blast)_plan(_groups[0-9]+)?$/ || $5 == "blast_plan_folded" {printf "%s/%s B=%s %s %.1f us dense %.1f us\n", $1, $2, $8, $5, $9 * 1e6, $10 * 1e6}' "$f"
  done
} >"$out/summary.txt"
tar czf "$out/session58.tar.gz" -C "$w" .
rm -rf "$w"
