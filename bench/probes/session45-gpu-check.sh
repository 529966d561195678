#!/usr/bin/env bash
# Session 45's one short GPU call: (1) does initcheck see cuBLAS's stores (probe), (2) the
# cluster kernels after the sm_80 changes (Kron pair16 and square kernels, BLR skinny stages),
# (3) the Hadamard view test that now fills Y's padding.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi -L
(cd bench/probes && nvcc -O2 -arch=sm_90 initcheck-cublas-store.cu -lcublas -o /tmp/probe) &&
  compute-sanitizer --tool initcheck --print-limit 3 /tmp/probe 2>&1 |
  grep -E 'case|Uninit|  at |SUMMARY' | sed -E 's/\(T1::Params\)//; s/\+0x[0-9a-f]+//'
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=OFF -DSTROP_BUILD_GPU_TESTS=ON >/tmp/build.log 2>&1 &&
  cmake --build build-gpu -j 16 --target strop_gpu_tests >>/tmp/build.log 2>&1 || {
  tail -20 /tmp/build.log
  exit 1
}
echo "built in $(($(date +%s) - t0)) s"
./build-gpu/tests/strop_gpu_tests --report_level=short --run_test=gpu_kron \
  --run_test='gpu_blr/skinny*' --run_test='gpu_blr/decode_and_skinny*' \
  --run_test='gpu_transforms/hadamard_kernel_takes*'
