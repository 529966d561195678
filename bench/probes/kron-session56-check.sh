#!/usr/bin/env bash
# Session 56's check of the two-role square kernel with one mbarrier arrival per thread (the
# version racecheck can follow), binaries built here and carried: build-final/{tests,bench}
# (this tree) and build-final/single/kron_bench (one arrival per CTA after a named barrier).
#   1. gpu_kron, then the one/two-signal square cases under racecheck (RACE_LIMIT seconds);
#   2. kron_bench --auto-only --reps 10 on Tables 1 and 3: this tree, single, this tree;
#   3. the full benchmark with this tree.
# Everything lands in OUT/kron-session56-check.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
square_cases='gpu_kron/equal_square_factors_on_one_or_two_signals*'
{
  gpu_tests "${TESTS:-gpu_kron}"
  sanitize racecheck "$square_cases"
  echo "tests done at $(elapsed) s"
} >"$w/tests.log" 2>&1
bench() { # NAME BINARY
  $2 --auto-only --no-table4 --reps 10 --only table1,table3 --csv "$w/kron-$1.csv" \
    --json "$w/kron-$1.json" >"$w/kron-$1.log" 2>&1
  echo "$1 done at $(elapsed) s" >>"$w/tests.log"
}
bench each1 $b/bench/kron_bench
bench single $b/single/kron_bench
bench each2 $b/bench/kron_bench
full_kron_bench session56-check
finish session56-check
