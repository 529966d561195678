#!/usr/bin/env bash
# Session 54's GPU calls: the square Kron kernel with mover threads (stores, and loads unless
# the step threads issue them, in warps of their own while the step threads run) against
# HEAD's kernel, in one run. Binaries built from bench/probes/kron-square-movers-tried.patch
# and carried: build-final/{tests/strop_gpu_tests, bench/kron_bench, base/kron_bench} (base:
# the commit before). VARIANTS: space-separated NAME:BUFFERS:MOVERS:STEP_LOADS, set through
# STROP_KRON_SQUARE_{BUFFERS,MOVERS,STEP_LOADS}; the first one also runs all of gpu_kron, the
# others its square-kernel cases. FULL=1: the variant with the least total Auto time over the
# float and double rows then runs the full benchmark (as scripts/gpu-bench.sh kron does) if
# FULL_BY seconds have not passed. Everything lands in OUT/kron-movers.tar.gz and
# OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
variants=${VARIANTS:-b2m64:2:64:0 b3m64:3:64:0 b2m128:2:128:0 b3m128:3:128:0}
with() { # NAME COMMAND...: the command under variant NAME's environment
  local spec
  spec=$(tr ' ' '\n' <<<"$variants" | grep "^$1:")
  IFS=: read -r _ buffers movers step_loads <<<"$spec"
  shift
  STROP_KRON_SQUARE_BUFFERS=$buffers STROP_KRON_SQUARE_MOVERS=$movers \
    STROP_KRON_SQUARE_STEP_LOADS=$step_loads "$@"
}
names=$(tr ' ' '\n' <<<"$variants" | cut -d: -f1)
first=$(head -1 <<<"$names")
{
  for v in $names; do
    filter='gpu_kron/equal_square*'
    [ "$v" = "$first" ] && filter=gpu_kron
    echo "== $filter, $v"
    with "$v" $b/tests/strop_gpu_tests --run_test="$filter" --report_level=short \
      --log_level=error 2>&1 | tail -3
  done
  echo "tests done at $(($(date +%s) - start)) s"
} >"$w/tests.log" 2>&1
bench() { # NAME COMMAND...
  local name=$1
  shift
  "$@" --auto-only --no-table4 --reps "${REPS:-10}" --only "${SHAPES:-table1,table3}" \
    --csv "$w/kron-$name.csv" --json "$w/kron-$name.json" >"$w/kron-$name.log" 2>&1
  echo "$name done at $(($(date +%s) - start)) s" >>"$w/tests.log"
}
total() {
  awk -F, '$1 ~ /table/ && ($4 == "float32" || $4 == "float64") {s += $6} END {print s}' "$w/kron-$1.csv"
}
bench base $b/base/kron_bench
for v in $names; do
  with "$v" bench "$v" $b/bench/kron_bench
done
best=$(for v in $names; do echo "$(total "$v") $v"; done | sort -g | head -1 | cut -d' ' -f2)
echo "best: $best" >>"$w/tests.log"
if [ "${FULL:-1}" = 1 ] && [ $(($(date +%s) - start)) -lt "${FULL_BY:-300}" ]; then
  with "$best" timeout 250 $b/bench/kron_bench --reps 20 --rowmajor \
    --csv "$w/kron-bench-session54-$best-$device.csv" \
    --json "$w/kron-summary-session54-$best-$device.json" >"$w/kron-full.log" 2>&1
  echo "full ($best) exit $? at $(($(date +%s) - start)) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  kron_rows
  cat "$w"/kron-summary-session54-*.json 2>/dev/null
} >"$out/summary.txt"
tar czf "$out/kron-movers.tar.gz" -C "$w" .
rm -rf "$w"
