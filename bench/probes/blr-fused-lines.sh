#!/usr/bin/env bash
# On the GPU machine (blr_bench built): ncu's per-instruction counts of one launch of the fused
# kernel (LAYER, STRUCT-th fused launch: SKIP), as a compact listing in OUT.
set -uo pipefail
out=${1:?OUT}
layer=${LAYER:-ViT-B/qkv}
ncu --clock-control none --section SourceCounters --section SpeedOfLight --section WarpStateStats \
  --import-source no -k regex:blr_fused_kernel --launch-skip ${SKIP:-3} --launch-count 1 \
  -o "$out/lines" ./build-gpu/bench/blr_bench --reps 1 --batches ${BATCH:-1024} --layer "$layer" \
  --csv /dev/null --csv16 /dev/null --json /dev/null >/dev/null 2>&1
ncu -i "$out/lines.ncu-rep" --page details | grep -E "Duration|Issued Warp|Warp Cycles Per Issued"
ncu -i "$out/lines.ncu-rep" --page source --print-source sass --csv >"$out/src.csv" 2>&1
python3 bench/probes/ncu_source_summary.py "$out/src.csv" "$out/lines-${TAG:-x}.tsv" | head -30
rm -f "$out/src.csv" "$out/lines.ncu-rep"
