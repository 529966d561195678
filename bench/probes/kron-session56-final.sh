#!/usr/bin/env bash
# Session 56's last GPU call, binaries built here and carried: build-final/{tests,bench} (this
# tree: the two-role square kernel and the planner's cost for it), build-final/prev/kron_bench
# (the same kernel with the planner before that cost) and build-final/probe/racecheck_probe
# (bench/probes/racecheck_mbarrier_probe.cu).
#   1. the racecheck probe, each variant plain and under racecheck;
#   2. gpu_kron with this tree;
#   3. kron_bench --auto-only on 8^6 and Table 4 (this tree, prev): the plans that changed;
#   4. the full benchmark with this tree, then 16^5 alone once more (its double Auto varied).
# Everything lands in OUT/kron-session56-final.tar.gz and OUT/summary.txt.
set -uo pipefail
# shellcheck source=bench/probes/probe-start.sh
. "$(dirname "$0")/probe-start.sh" "$@"
{
  for v in 0 1 2 3; do
    $b/probe/racecheck_probe $v
    compute-sanitizer --tool racecheck --print-limit 2 $b/probe/racecheck_probe $v 2>&1 |
      grep -E "RACECHECK SUMMARY|ERROR SUMMARY|variant"
  done
  gpu_tests "${TESTS:-gpu_kron}"
  echo "tests done at $(elapsed) s"
} >"$w/tests.log" 2>&1
for v in new prev; do
  bin=$b/bench/kron_bench
  [ $v = prev ] && bin=$b/prev/kron_bench
  $bin --auto-only --reps 20 --only 8^6,table4 --csv "$w/kron-plans-$v.csv" \
    --json "$w/kron-plans-$v.json" >"$w/kron-plans-$v.log" 2>&1
  echo "plans $v done at $(elapsed) s" >>"$w/tests.log"
done
full_kron_bench session56-final
$b/bench/kron_bench --reps 20 --only 16^5 --no-table4 --csv "$w/kron-16p5-again.csv" \
  --json "$w/kron-16p5-again.json" >"$w/kron-16p5-again.log" 2>&1
echo "16^5 again done at $(elapsed) s" >>"$w/tests.log"
finish session56-final
