#!/usr/bin/env bash
# Session 37's GPU check, in calls that each stay under the device's 10-minute limit:
# builds strop_gpu_tests in build-final (kept while the machine stays warm), then runs the
# GPU suites one at a time, in order, until DEADLINE seconds have passed since the start; the
# suites still to run are listed in OUT/remaining.txt. SUITES (space-separated) overrides the
# list; TUNED=1 then runs gpu_ks and gpu_gemm_tuning twice with STROP_TUNE=1 through one
# tuning file (the second run reads what the first wrote).
#   bash bench/probes/session37-gpu.sh OUT
set -uo pipefail
out=${1:?OUT}
start=$(date +%s)
deadline=${DEADLINE:-540}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
if [ ! -x build-final/tests/strop_gpu_tests ] || [ "${REBUILD:-1}" = 1 ]; then
  cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=OFF -DSTROP_BUILD_GPU_TESTS=ON \
    >"$out/build-$dev.log" 2>&1
  cmake --build build-final -j 16 --target strop_gpu_tests >>"$out/build-$dev.log" 2>&1 ||
    { echo "build failed"; tail -30 "$out/build-$dev.log"; exit 1; }
  echo "built in $(($(date +%s) - start)) s"
fi
bin=./build-final/tests/strop_gpu_tests
suites=${SUITES:-"gpu_blr gpu_dense gpu_factorize gpu_kron gpu_ks gpu_stl gpu_stl_kernels gpu_gemm_tuning gpu_transforms gpu_views"}
log="$out/gpu-tests-${TAG:-session37}-$dev.log"
: >"$out/remaining.txt"
for s in $suites; do
  if [ $(($(date +%s) - start)) -gt "$deadline" ]; then echo "$s" >>"$out/remaining.txt"; continue; fi
  t0=$(date +%s)
  echo "== $s" >>"$log"
  stdbuf -oL $bin --run_test="$s" --report_level=short --log_level=error >>"$log" 2>&1
  echo "== $s exit $? ($(($(date +%s) - t0)) s)" | tee -a "$log"
done
if [ "${TUNED:-0}" = 1 ]; then
  tlog="$out/gpu-tests-${TAG:-session37}-tuned-$dev.log"
  rm -f /tmp/strop-tuning.tsv
  for pass in 1 2; do
    t0=$(date +%s)
    echo "== tuned pass $pass" >>"$tlog"
    STROP_TUNE=1 STROP_TUNING_FILE=/tmp/strop-tuning.tsv stdbuf -oL $bin \
      --run_test=gpu_ks,gpu_gemm_tuning --report_level=short --log_level=error >>"$tlog" 2>&1
    echo "== tuned pass $pass exit $? ($(($(date +%s) - t0)) s), $(($(wc -l </tmp/strop-tuning.tsv) - 1)) entries" |
      tee -a "$tlog"
  done
fi
sed -i 's/\x1b\[[0-9;]*m//g' "$out"/*.log
