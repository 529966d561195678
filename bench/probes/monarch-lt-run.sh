#!/usr/bin/env bash
# On the GPU machine: cuBLAS's default against the fastest cuBLASLt algorithm for the Monarch
# plan's two strided GEMMs (bench/probes/monarch_lt_probe.cu; written in session 27, not yet
# run), Llama-7B qkvo (4096, 16 x 16 blocks, rank 64 per block) and Llama-3.2-1B qo
# (2048, 16 x 16, rank 16) at B = 128, 1024 and 4096, into OUT.
#   bash bench/probes/monarch-lt-run.sh OUT
set -uo pipefail
out=${1:?OUT}
bin=/tmp/monarch_lt_probe
nvcc -O3 -std=c++17 -arch=sm_90 -o $bin bench/probes/monarch_lt_probe.cu -lcublas -lcublasLt
for shape in ${SHAPES:-"4096 16 64 1024" "4096 16 64 4096" "4096 16 64 128" "2048 16 16 1024"}; do
  timeout 120 $bin $shape
  echo "rc=$?"
done 2>&1 | tee "$out/monarch-lt-probe${TAG:-}-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_').txt"
