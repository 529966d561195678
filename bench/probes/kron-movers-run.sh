#!/usr/bin/env bash
# Session 54's GPU call: the square Kron kernel with mover threads (loads and stores in warps
# of their own while the step threads run) against HEAD's kernel, in one run. Binaries built
# elsewhere and carried: build-final/{tests/strop_gpu_tests, bench/kron_bench, base/kron_bench}
# (base: the commit before). Variants by environment: STROP_KRON_SQUARE_BUFFERS (2, 3),
# STROP_KRON_SQUARE_MOVERS (32, 64, 128). Everything lands in OUT/kron-movers.tar.gz and
# OUT/summary.txt.
set -uo pipefail
out=${1:?OUT}
w=$out/work
mkdir -p "$w"
b=build-final
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >"$w/device.txt"
{
  echo "== gpu_kron, default (2 buffers, 64 movers)"
  $b/tests/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 | tail -4
  for cfg in "3 64" "2 128" "3 128" "2 32"; do
    set -- $cfg
    echo "== square cases, buffers $1 movers $2"
    STROP_KRON_SQUARE_BUFFERS=$1 STROP_KRON_SQUARE_MOVERS=$2 $b/tests/strop_gpu_tests \
      --run_test='gpu_kron/equal_square*,plans_on_devices_with_less_shared_memory' \
      --report_level=short --log_level=error 2>&1 | tail -3
  done
  echo "tests done at $(($(date +%s) - start)) s"
} >"$w/tests.log" 2>&1
bench() {
  local name=$1
  shift
  "$@" --auto-only --no-table4 --reps ${REPS:-10} --only "${SHAPES:-table1,table3}" \
    --csv "$w/kron-$name.csv" --json "$w/kron-$name.json" >"$w/kron-$name.log" 2>&1
  echo "$name done at $(($(date +%s) - start)) s" >>"$w/tests.log"
}
bench base $b/base/kron_bench
bench b2m64 $b/bench/kron_bench
STROP_KRON_SQUARE_BUFFERS=3 bench b3m64 $b/bench/kron_bench
STROP_KRON_SQUARE_MOVERS=128 bench b2m128 $b/bench/kron_bench
STROP_KRON_SQUARE_BUFFERS=3 STROP_KRON_SQUARE_MOVERS=128 bench b3m128 $b/bench/kron_bench
bench base2 $b/base/kron_bench
{
  cat "$w/device.txt" "$w/tests.log"
  for f in "$w"/kron-*.csv; do
    echo "== $(basename "$f")"
    awk -F, '$1 ~ /table/ && ($4 == "float32" || $4 == "float64") {printf "%s %s %s auto=%.3f ms frac=%.3f err=%s\n", $2, $3, $4, $6 * 1e3, 1 / $16, $18}' "$f"
  done
} >"$out/summary.txt"
tar czf "$out/kron-movers.tar.gz" -C "$w" .
rm -rf "$w"
