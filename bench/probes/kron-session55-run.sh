#!/usr/bin/env bash
# Session 55's GPU call: the square Kron kernel's tile load as pointer walks with compile-time
# steps and its vector store with per-batch offsets (this tree, build-final/{tests,bench}),
# against the load change alone (build-final/newload), HEAD's kernel (build-final/base) and
# session 54's mover-thread patch with the same load loop (build-final/{movers,movers-tests},
# built from bench/probes/kron-square-movers-tried.patch), binaries built here and carried.
# Runs gpu_kron with this tree, the square cases with each mover variant, then the benchmark
# rows of Tables 1 and 3: base, newload, newstore, the two mover variants, then base, newload,
# newstore again (medians of --reps 10 each), then the full benchmark with this tree if
# FULL_BY seconds have not passed, then ncu on the two float 16^5 passes (this tree and HEAD)
# if PROFILE_BY seconds have not passed. MOVERS=0 skips the mover variants; TESTS filters. Everything lands
# in OUT/kron-session55.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
elapsed() { echo $(($(date +%s) - start)); }
movers() { # BUFFERS MOVERS STEP_LOADS COMMAND...
  STROP_KRON_SQUARE_BUFFERS=$1 STROP_KRON_SQUARE_MOVERS=$2 STROP_KRON_SQUARE_STEP_LOADS=$3 "${@:4}"
}
tests() { # NAME BINARY FILTER [env...]
  echo "== $1 $3"
  "${@:4}" "$2" --run_test="$3" --report_level=short --log_level=error 2>&1 | tail -3
}
{
  tests newstore $b/tests/strop_gpu_tests "${TESTS:-gpu_kron}"
  if [ "${MOVERS:-1}" = 1 ]; then
    tests L3 $b/movers-tests/strop_gpu_tests 'gpu_kron/equal_square*' movers 3 128 1
    tests M2 $b/movers-tests/strop_gpu_tests 'gpu_kron/equal_square*' movers 2 128 0
  fi
  echo "tests done at $(elapsed) s"
} >"$w/tests.log" 2>&1
bench() { # NAME BINARY [env...]; a binary not carried is skipped
  local name=$1 bin=$2
  [ -x "$bin" ] || return 0
  "${@:3}" "$bin" --auto-only --no-table4 --reps "${REPS:-10}" --only "${SHAPES:-table1,table3}" \
    --csv "$w/kron-$name.csv" --json "$w/kron-$name.json" >"$w/kron-$name.log" 2>&1
  echo "$name done at $(elapsed) s" >>"$w/tests.log"
}
for round in 1 2; do
  bench base$round $b/base/kron_bench
  bench newload$round $b/newload/kron_bench
  bench newstore$round $b/bench/kron_bench
  if [ "$round" = 1 ] && [ "${MOVERS:-1}" = 1 ]; then
    bench L3 $b/movers/kron_bench movers 3 128 1
    bench M2 $b/movers/kron_bench movers 2 128 0
  fi
done
if [ "$(elapsed)" -lt "${FULL_BY:-260}" ]; then
  timeout 200 $b/bench/kron_bench --reps 20 --rowmajor \
    --csv "$w/kron-bench-session55-newstore-$device.csv" \
    --json "$w/kron-summary-session55-newstore-$device.json" >"$w/kron-full.log" 2>&1
  echo "full exit $? at $(elapsed) s" >>"$w/tests.log"
fi
if [ "$(elapsed)" -lt "${PROFILE_BY:-420}" ]; then
  for v in newstore base; do
    bin=$b/bench/kron_bench
    [ $v = base ] && bin=$b/base/kron_bench
    [ -x "$bin" ] || continue
    timeout 60 ncu --clock-control none --section SpeedOfLight --section LaunchStats \
      --section SchedulerStats --section InstructionStats --section WarpStateStats \
      -k regex:kron_square --launch-count 2 \
      $bin --reps 1 --only 16^5 --auto-only --no-table4 >"$w/ncu-$v.txt" 2>&1
  done
  echo "profiles done at $(elapsed) s" >>"$w/tests.log"
fi
{
  cat "$w/device.txt" "$w/tests.log"
  kron_rows
  cat "$w"/kron-summary-session55-*.json 2>/dev/null
  for v in newstore base; do
    echo "== ncu $v"
    grep -E "Duration|Issued Warp|Executed Instructions  |No Eligible|DRAM Throughput" \
      "$w/ncu-$v.txt" 2>/dev/null | head -20
  done
} >"$out/summary.txt"
tar czf "$out/kron-session55.tar.gz" -C "$w" .
rm -rf "$w"
