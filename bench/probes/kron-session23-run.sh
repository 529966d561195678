#!/usr/bin/env bash
# Session 23's GPU call for the 16-bit pair kernel (operators/kron/kron_fused_pair16.cu):
# gpu_kron + the full kron_bench (scripts/gpu-bench.sh; 16-bit rows now carry Auto and one
# GEMM per factor), and ncu of the first half-precision pair pass of
# 32^4 (M = 1024), into OUT. TAG (default -session23) names the files.
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session23}
STROP_RUN_TAG=$tag \
  bash scripts/gpu-bench.sh kron "$out" --reps 20 --rowmajor >/dev/null 2>&1
tail -40 "$out"/gpu-kron$tag-*.log
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section WarpStateStats --section LaunchStats --section Occupancy -k regex:kron_pair16 \
  --launch-count 1 ./build-gpu/bench/kron_bench --reps 1 --only 32^4 --no-table4 \
  >"$out/ncu-kron-pair16$tag.txt" 2>&1
grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers|Block Limit" \
  "$out/ncu-kron-pair16$tag.txt"
