#!/usr/bin/env bash
# Session 54: ncu's full set with per-instruction stall samples on the two float 16^5 passes,
# for the mover-thread kernel of bench/probes/kron-square-movers-tried.patch (2 buffers, 128
# movers; build-final/bench/kron_bench) and HEAD's kernel (build-final/base/kron_bench),
# binaries carried; into OUT.
set -uo pipefail
out=${1:?OUT}
b=build-final
for v in movers base; do
  bin=$b/bench/kron_bench
  [ $v = base ] && bin=$b/base/kron_bench
  STROP_KRON_SQUARE_BUFFERS=2 STROP_KRON_SQUARE_MOVERS=128 timeout 150 ncu --clock-control none \
    --set full --import-source no -k regex:kron_square --launch-count 2 -o "$out/$v" \
    $bin --reps 1 --only 16^5 --auto-only --no-table4 >"$out/ncu-$v-run.log" 2>&1
  ncu -i "$out/$v.ncu-rep" --page details --print-details all >"$out/ncu-$v-details.txt" 2>&1
  ncu -i "$out/$v.ncu-rep" --page source --print-source sass --csv >"$out/ncu-$v-source.csv" 2>&1
  rm -f "$out/$v.ncu-rep"
  echo "== $v"
  grep -E "Duration|Issued Warp|Executed Instructions  |No Eligible|DRAM Throughput" \
    "$out/ncu-$v-details.txt" | head -20
done
gzip "$out"/ncu-*-source.csv
