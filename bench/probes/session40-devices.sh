#!/usr/bin/env bash
# Session 40 on a machine with two GPUs: the cost of the per-call device checks, then every GPU
# suite through session37-gpu.sh (gpu_devices first) with STROP_ERROR_LOG collecting each
# checked error and its tolerance (OUT/errors-<device>.tsv).
#   TAG=session40 bash bench/probes/session40-devices.sh OUT
set -uo pipefail
out=${1:?OUT}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
nvidia-smi -L >"$out/devices.txt"
nvcc -O2 -arch=sm_90 bench/probes/device-scope-cost.cu -o /tmp/device-scope-cost &&
  /tmp/device-scope-cost | tee "$out/device-scope-cost-$dev.txt"
if [ "${EXAMPLE:-1}" = 1 ]; then  # the several-GPU example, built beside the tests
  cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=ON -DSTROP_BUILD_GPU_TESTS=ON >/dev/null 2>&1
  cmake --build build-final -j 16 --target example_several_gpus strop_gpu_tests \
    >"$out/build-example-$dev.log" 2>&1 && ./build-final/examples/example_several_gpus |
    tee "$out/example-several-gpus-$dev.txt"
  export REBUILD=0
fi
export STROP_ERROR_LOG="$out/errors-$dev.tsv"
SUITES=${SUITES:-"gpu_devices gpu_concurrency gpu_random_expressions gpu_factorize gpu_blr gpu_dense gpu_kron gpu_ks gpu_stl gpu_stl_kernels gpu_gemm_tuning gpu_transforms gpu_views"} \
  bash bench/probes/session37-gpu.sh "$out"
[ -f device_1_alone.log ] && cp device_1_alone.log "$out/"
exit 0
