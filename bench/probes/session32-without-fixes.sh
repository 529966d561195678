#!/usr/bin/env bash
# Reverts this session's GPU fixes in the device copy, rebuilds the GPU tests, and runs the
# tests written for them: each must fail (or crash) without its fix (session 32, on a fresh
# machine: `bash bench/probes/session32-without-fixes.sh OUT`).
set -uo pipefail
out=${1:?OUT}
patch -R -p1 < bench/probes/session32-fixes.patch > "$out/prefix.log" 2>&1 || exit 1
start=$(date +%s)
[ -d build-final ] || cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DSTROP_BUILD_BENCH=OFF >> "$out/prefix.log" 2>&1
cmake --build build-final -j 16 --target strop_gpu_tests >> "$out/prefix.log" 2>&1
echo "build exit $? ($(($(date +%s) - start)) s)"
for t in gpu_dense/an_operator_outlives_the_context_it_was_first_applied_with \
         gpu_ks/fused_kernel_more_signal_tiles_than_grid_y \
         gpu_ks/mma_kernel_more_signal_tiles_than_grid_y \
         gpu_factorize/jacobi_svd_blocks_at_the_shared_memory_limit \
         gpu_blr/decode_kernel_on_signals_not_aligned_to_16_bytes; do
  timeout 120 ./build-final/tests/strop_gpu_tests --run_test=$t --report_level=short \
    --log_level=error > "$out/prefix-$(echo $t | tr '/' '-').log" 2>&1
  echo "$t: exit $?"; grep -m2 -E "error|fatal" "$out/prefix-$(echo $t | tr '/' '-').log"
done
