#!/usr/bin/env bash
# On the GPU machine: the square Kron kernel's SASS, and ncu's full set (stall reasons,
# instruction mix, per-instruction samples) on the two float 16^5 passes, into OUT.
#   bash bench/probes/kron-square-profile.sh OUT [extra cmake targets]
set -uo pipefail
out=${1:?OUT}
shift
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target kron_bench "$@" 2>&1 | grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - start)) s"
obj=$(find build-gpu -name 'kron_fused_square.cu.o' | head -1)
cuobjdump -sass "$obj" >"$out/kron-square.sass" 2>&1
grep -c "" "$out/kron-square.sass"
ncu --clock-control none --set full --import-source no -k regex:kron_square --launch-count 2 \
  -o "$out/kron-square" ./build-gpu/bench/kron_bench --reps 1 --only 16^5 --no-table4 >/dev/null 2>&1
ncu -i "$out/kron-square.ncu-rep" --page details --print-details all >"$out/kron-square-details.txt" 2>&1
ncu -i "$out/kron-square.ncu-rep" --page source --print-source sass --csv \
  >"$out/kron-square-source.csv" 2>&1
ls -la "$out"
grep -E "Duration|Stall|Issued Warp|Executed Instructions  " "$out/kron-square-details.txt" | head -60
