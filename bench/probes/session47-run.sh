#!/usr/bin/env bash
# Session 47 on one H100/H200, in two calls that each stay under the device's 10 minutes:
#   PART=tests bash bench/probes/session47-run.sh OUT   builds strop_gpu_tests and the three
#     issue benchmarks in build-final, then runs every GPU suite (session37-gpu.sh) with each
#     checked error and its tolerance in OUT/errors-<device>.tsv;
#   PART=bench bash bench/probes/session47-run.sh OUT   (machine still warm) runs kron_bench
#     (Tables 1 and 3 and 16 bits), blr_bench per call at B = 1 and 1024, and stl_bench;
#   PART=blr bash bench/probes/session47-run.sh OUT   (after the vector strided copy) builds
#     strop_gpu_tests and blr_bench, runs gpu_blr, every kernel of the Llama-7B qkvo calls at
#     B = 1024 under ncu (OUT/stages-*.txt), then blr_bench per call at B = 1, 1024 (files
#     tagged v3; the v2 run, the vector runs alone, wrote the same files tagged v2; v3 added the
#     grid-indexed transpose of bench/probes/blr-transpose-grid-tried.patch, since reverted).
# Everything is also packed into OUT/session47-<part>.tar.gz (few files come back from OUT).
set -uo pipefail
out=${1:?OUT}
part=${PART:-tests}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
start=$(date +%s)
# Builds the given targets in build-final (sm_90, benchmarks and GPU tests on).
build() {
  cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_CHECK_SM80=OFF -DSTROP_BUILD_BENCH=ON -DSTROP_BUILD_EXAMPLES=OFF \
    -DSTROP_BUILD_GPU_TESTS=ON >"$out/build-$dev.log" 2>&1
  cmake --build build-final -j 16 --target "$@" >>"$out/build-$dev.log" 2>&1 ||
    { echo "build failed"; tail -30 "$out/build-$dev.log"; exit 1; }
  echo "built in $(($(date +%s) - start)) s"
}
if [ "$part" = tests ]; then
  nvidia-smi -L >"$out/devices.txt"
  build strop_gpu_tests kron_bench blr_bench stl_bench
  export STROP_ERROR_LOG="$out/errors-$dev.tsv" REBUILD=0
  DEADLINE=${DEADLINE:-560} TAG=session47 SUITES="gpu_devices gpu_concurrency \
gpu_random_expressions gpu_kron_distributed gpu_kron gpu_ks gpu_blr gpu_transforms gpu_dense \
gpu_views gpu_stl gpu_stl_kernels gpu_gemm_tuning gpu_factorize" \
    bash bench/probes/session37-gpu.sh "$out"
elif [ "$part" = blr ]; then
  build strop_gpu_tests blr_bench
  ./build-final/tests/strop_gpu_tests --run_test=gpu_blr --report_level=short --log_level=error \
    >"$out/gpu-blr-session47-$dev.log" 2>&1
  echo "gpu_blr exit $? ($(($(date +%s) - start)) s)"; tail -4 "$out/gpu-blr-session47-$dev.log"
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    ./build-final/bench/blr_bench --reps 1 --batches 1024 --layer Llama-7B/qkvo \
    --csv /dev/null --csv16 /dev/null --json /dev/null >"$out/stages.csv" 2>/dev/null
  python3 bench/probes/ncu_kernel_times.py "$out/stages.csv" >"$out/stages-llama7b-qkvo-b1024-$dev.txt"
  rm -f "$out/stages.csv"
  echo "ncu done ($(($(date +%s) - start)) s)"
  timeout 150 ./build-final/bench/blr_bench --batches 1,1024 --csv "$out/blr-bench-session47-v3-$dev.csv" \
    --csv16 "$out/blr16-bench-session47-v3-$dev.csv" \
    --json "$out/blr-summary-session47-v3-$dev.json" >"$out/blr-bench-session47-v3-$dev.log" 2>&1
  echo "blr_bench exit $? ($(($(date +%s) - start)) s)"
  cat "$out"/*summary*.json
else
  b=./build-final/bench
  timeout 200 $b/kron_bench --no-table4 --csv "$out/kron-bench-session47-$dev.csv" \
    --json "$out/kron-summary-session47-$dev.json" >"$out/kron-bench-session47-$dev.log" 2>&1
  echo "kron_bench exit $? ($(($(date +%s) - start)) s)"
  timeout 170 $b/blr_bench --batches 1,1024 --csv "$out/blr-bench-session47-$dev.csv" \
    --csv16 "$out/blr16-bench-session47-$dev.csv" --json "$out/blr-summary-session47-$dev.json" \
    >"$out/blr-bench-session47-$dev.log" 2>&1
  echo "blr_bench exit $? ($(($(date +%s) - start)) s)"
  timeout 170 $b/stl_bench --csv "$out/stl-bench-session47-$dev.csv" \
    --json "$out/stl-summary-session47-$dev.json" >"$out/stl-bench-session47-$dev.log" 2>&1
  echo "stl_bench exit $? ($(($(date +%s) - start)) s)"
  cat "$out"/*summary*.json
fi
(cd "$out" && tar czf "session47-$part.tar.gz" --exclude='*.tar.gz' .)
