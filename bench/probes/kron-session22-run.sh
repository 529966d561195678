#!/usr/bin/env bash
# Session 22's GPU call for the square Kron kernel: gpu_kron + the full kron_bench
# (scripts/gpu-bench.sh), gpu_kron twice more (the relaxed cluster barrier must not race),
# and a light ncu of the two float 16^5 passes, into OUT.
# TAG (default -session22) names the files.
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session22}
STROP_RUN_TAG=$tag bash scripts/gpu-bench.sh kron "$out" --reps 20 --rowmajor >/dev/null 2>&1
tail -32 "$out"/gpu-kron$tag-*.log
for i in 2 3; do
  ./build-gpu/tests/strop_gpu_tests --run_test=gpu_kron --report_level=short --log_level=error 2>&1 |
    tail -3 | tee -a "$out"/gpu-kron$tag-repeats.log
done
ncu --clock-control none --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
  --section InstructionStats -k regex:kron_square --launch-count 2 ./build-gpu/bench/kron_bench \
  --reps 1 --only 16^5 --no-table4 >"$out/ncu-kron-square$tag.txt" 2>&1
grep -E "Duration|Executed Instructions  |Issued Warp Per" "$out/ncu-kron-square$tag.txt"
