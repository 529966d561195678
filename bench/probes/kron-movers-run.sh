#!/usr/bin/env bash
# Session 54's GPU call: the square Kron kernel with mover threads (loads and stores in warps
# of their own while the step threads run) against HEAD's kernel, in one run. Binaries built
# elsewhere and carried: build-final/{tests/strop_gpu_tests, bench/kron_bench, base/kron_bench}
# (base: the commit before). Variants by environment: STROP_KRON_SQUARE_BUFFERS (2, 3),
# STROP_KRON_SQUARE_MOVERS (32, 64, 128). The variant with the least total Auto time over
# the float and double rows then runs the full benchmark (as scripts/gpu-bench.sh kron does)
# if FULL_BY seconds have not passed. Everything lands in OUT/kron-movers.tar.gz and
# OUT/summary.txt.
set -uo pipefail
out=${1:?OUT}
w=$out/work
mkdir -p "$w"
b=build-final
start=$(date +%s)
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
echo "$device" >"$w/device.txt"
{
  echo "== gpu_kron, default (2 buffers, 64 movers)"
  $b/tests/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 | tail -4
  for cfg in "3 64" "2 128" "3 128"; do
    set -- $cfg
    echo "== square cases, buffers $1 movers $2"
    STROP_KRON_SQUARE_BUFFERS=$1 STROP_KRON_SQUARE_MOVERS=$2 $b/tests/strop_gpu_tests \
      --run_test='gpu_kron/equal_square*' --report_level=short --log_level=error 2>&1 | tail -3
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
total() {
  awk -F, '$1 ~ /table/ && ($4 == "float32" || $4 == "float64") {s += $6} END {print s}' "$w/kron-$1.csv"
}
bench base $b/base/kron_bench
bench b2m64 $b/bench/kron_bench
STROP_KRON_SQUARE_BUFFERS=3 bench b3m64 $b/bench/kron_bench
STROP_KRON_SQUARE_MOVERS=128 bench b2m128 $b/bench/kron_bench
STROP_KRON_SQUARE_BUFFERS=3 STROP_KRON_SQUARE_MOVERS=128 bench b3m128 $b/bench/kron_bench
best=$(for v in b2m64 b3m64 b2m128 b3m128; do echo "$(total $v) $v"; done | sort -g | head -1 | cut -d' ' -f2)
echo "best: $best" >>"$w/tests.log"
if [ $(($(date +%s) - start)) -lt "${FULL_BY:-300}" ]; then
  buffers=${best:1:1}
  movers=${best#*m}
  STROP_KRON_SQUARE_BUFFERS=$buffers STROP_KRON_SQUARE_MOVERS=$movers timeout 250 \
    $b/bench/kron_bench --reps 20 --rowmajor --csv "$w/kron-bench-session54-$best-$device.csv" \
    --json "$w/kron-summary-session54-$best-$device.json" >"$w/kron-full.log" 2>&1
  echo "full ($best) exit $? at $(($(date +%s) - start)) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  for f in "$w"/kron-b*.csv "$w"/kron-base*.csv; do
    echo "== $(basename "$f")"
    awk -F, '$1 ~ /table/ && ($4 == "float32" || $4 == "float64") {printf "%s %s %s auto=%.3f ms frac=%.3f err=%s\n", $2, $3, $4, $6 * 1e3, 1 / $16, $18}' "$f"
  done
  cat "$w"/kron-summary-session54-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/kron-movers.tar.gz" -C "$w" .
rm -rf "$w"
