#!/usr/bin/env bash
# On the GPU machine: the wgmma GEMM probe in a few configurations against cuBLAS.
#   bash bench/probes/wgmma-run.sh OUT
set -uo pipefail
out=${1:?OUT}
src=bench/probes/wgmma_gemm_probe.cu
# CONFIGS: "BN,STAGES,INFLIGHT,GROUP ..." (the first run's five by default).
for cfg in ${CONFIGS:-128,5,0,0 128,5,1,0 256,4,0,0 256,4,1,0 256,3,1,0}; do
  IFS=, read -r -a c <<<"$cfg"
  set -- "${c[@]}"
  bin=/tmp/wgmma_$1_$2_$3_$4
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -DWGMMA_BN=$1 -DWGMMA_STAGES=$2 \
    -DWGMMA_INFLIGHT=$3 -DWGMMA_GROUP=$4 -o $bin $src -lcublas 2>&1 | grep -E "error" | head -5
  for shape in ${SHAPES:-"8192 8192 8192" "4096 4096 4096" "2048 8192 2048"}; do
    timeout 60 $bin $shape; echo "rc=$?"
  done
done 2>&1 | tee "$out/wgmma-probe${TAG:-}-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_').txt"
