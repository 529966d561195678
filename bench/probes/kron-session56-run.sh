#!/usr/bin/env bash
# Session 56's GPU call: the square Kron kernel in two forms (single role for P = 32 or where
# three tile buffers do not fit; steps + mover threads for P <= 16), binaries built here and
# carried: build-final/{tests,bench} (this tree), build-final/{old,old-tests} (HEAD before the
# change, single role everywhere) and build-final/movers (session 55's mover patch, whose
# STROP_KRON_SQUARE_* knobs select the form this tree fixed).
#   1. gpu_kron with this tree; the square-kernel cases under compute-sanitizer racecheck and
#      synccheck (RACE_LIMIT seconds each);
#   2. kron_bench --auto-only --reps 10 on Tables 1 and 3 (this tree, old) and on Table 4's
#      float rows (this tree, old, movers: the P = 2 and 4 shapes decide their form);
#   3. the full benchmark with this tree if FULL_BY seconds have not passed.
# Everything lands in OUT/kron-session56.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
square_cases='gpu_kron/equal_square_factors_on_one_or_two_signals*'
{
  gpu_tests "${TESTS:-gpu_kron}"
  sanitize racecheck "$square_cases"
  sanitize synccheck "$square_cases"
  echo "tests done at $(elapsed) s"
} >"$w/tests.log" 2>&1
bench() { # NAME BINARY SHAPES [env...]; a binary not carried is skipped
  local name=$1 bin=$2 shapes=$3
  [ -x "$bin" ] || return 0
  "${@:4}" "$bin" --auto-only --reps "${REPS:-10}" --only "$shapes" \
    --csv "$w/kron-$name.csv" --json "$w/kron-$name.json" >"$w/kron-$name.log" 2>&1
  echo "$name done at $(elapsed) s" >>"$w/tests.log"
}
movers() { STROP_KRON_SQUARE_BUFFERS=3 STROP_KRON_SQUARE_MOVERS=128 STROP_KRON_SQUARE_STEP_LOADS=1 "$@"; }
bench new $b/bench/kron_bench table1,table3
bench old $b/old/kron_bench table1,table3
bench new-t4 $b/bench/kron_bench table4
bench old-t4 $b/old/kron_bench table4
bench movers-t4 $b/movers/kron_bench table4 movers
if [ "$(elapsed)" -lt "${FULL_BY:-300}" ]; then
  full_kron_bench session56
fi
finish session56
