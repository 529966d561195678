#!/usr/bin/env bash
# Session 46's first GPU call: what session 45 changed and could not run.
# (1) initcheck probe: does the sanitizer see cuBLAS's stores; (2) the cluster kernels after
# the sm_80 changes (Kron pair16/square, BLR skinny stages); (3) the Hadamard view test that
# now fills Y's padding; (4) gpu_dense with the shared-memory DeviceError test; (5) all of
# gpu_transforms. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi -L | tee "$OUT/device.txt"
(cd bench/probes && nvcc -O2 -arch=sm_90 initcheck-cublas-store.cu -lcublas -o /tmp/probe) &&
  /tmp/probe >"$OUT/probe-plain.log" 2>&1 &&
  compute-sanitizer --tool initcheck --print-limit 3 /tmp/probe >/tmp/probe-init.log 2>&1
grep -E 'case|Uninit|  at |SUMMARY' /tmp/probe-init.log | sed -E 's/\(T1::Params\)//; s/\+0x[0-9a-f]+//' |
  tee "$OUT/probe-initcheck.log"
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
  --run_test=gpu_transforms --run_test=gpu_dense 2>&1 | tee "$OUT/tests.log" | tail -40
