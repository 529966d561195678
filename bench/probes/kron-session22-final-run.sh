#!/usr/bin/env bash
# Session 22's check of the final tree: every GPU test suite, then ncu's full set with
# per-instruction samples on the square Kron kernel's two float 16^5 passes (as in
# kron-square-profile.sh), into OUT.
set -uo pipefail
out=${1:?OUT}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
log="$out/gpu-all-session22-final-$device.log"
{
  echo "# strop: all GPU test suites, session 22 final tree, $(date -u +%FT%TZ) on $device"
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
  start=$(date +%s)
  cmake --build build-gpu -j 16 --target strop_gpu_tests kron_bench 2>&1 | grep -E "error|warning" | head -30
  echo "build: $(($(date +%s) - start)) s"
  timeout 400 ./build-gpu/tests/strop_gpu_tests --report_level=short --log_level=error
  echo "gpu tests exit code: $?"
} >"$log" 2>&1
tail -8 "$log"
ncu --clock-control none --set full --import-source no -k regex:kron_square --launch-count 2 \
  -o "$out/kron-square-final" ./build-gpu/bench/kron_bench --reps 1 --only 16^5 --no-table4 >/dev/null 2>&1
ncu -i "$out/kron-square-final.ncu-rep" --page details --print-details all >"$out/kron-square-final-details.txt" 2>&1
ncu -i "$out/kron-square-final.ncu-rep" --page source --print-source sass --csv \
  >"$out/kron-square-final-source.csv" 2>&1
rm -f "$out/kron-square-final.ncu-rep"
grep -E "^    Duration|Executed Instructions  " "$out/kron-square-final-details.txt"
