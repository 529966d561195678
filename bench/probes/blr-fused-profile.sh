#!/usr/bin/env bash
# On the GPU machine: graph-replay times of the one-launch BLR kernel against the cuBLAS plans
# on small layers at B = 1024, then ncu's full set on the kernel (GPT2-S c_attn, DiT-XL/2 qkv).
#   bash bench/probes/blr-fused-profile.sh OUT
set -uo pipefail
out=${1:?OUT}
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target blr_bench 2>&1 | grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - start)) s"
obj=$(find build-gpu -name 'blr_fused.cu.o' | head -1)
cuobjdump -res-usage "$obj" 2>&1 | grep -A1 blr_fused_kernel | head -8
for layer in GPT2-S/c_attn ViT-B/qkv DiT-XL/2/qkv Llama-3.2-1B/qo; do
  tag=$(echo "$layer" | tr '/' '_')
  ./build-gpu/bench/blr_bench --graph --reps 10 --batches 1024 --layer "$layer" \
    --csv /dev/null --csv16 "$out/graph-$tag.csv" --json /dev/null >/dev/null 2>&1
  grep -E "plan|unfused" "$out/graph-$tag.csv" | awk -F, '{printf "%s %s %s %.1f us (dense %.1f, bound %.1f)\n",$1,$2,$5,$9*1e6,$10*1e6,$11*1e6}'
done
for layer in GPT2-S/c_attn DiT-XL/2/qkv; do
  tag=$(echo "$layer" | tr '/' '_')
  ncu --clock-control none --set full --import-source no -k regex:blr_fused_kernel \
    --launch-count 12 -o "$out/ncu-$tag" ./build-gpu/bench/blr_bench --reps 1 --batches 1024 \
    --layer "$layer" --csv /dev/null --csv16 /dev/null --json /dev/null >/dev/null 2>&1
  ncu -i "$out/ncu-$tag.ncu-rep" --page details --print-details all >"$out/ncu-$tag.txt" 2>&1
  ncu -i "$out/ncu-$tag.ncu-rep" --page source --print-source sass --csv >"$out/ncu-$tag-source.csv" 2>&1
  grep -E "^  blr_fused|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Grid Size|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|No Eligible|Issued Warp" "$out/ncu-$tag.txt" | head -150
done
ls -la "$out"
