#!/usr/bin/env bash
# Session 43: DistributedKron on the GPU. Builds strop_gpu_tests, kron_distributed_bench and
# the kron_split example in build-final, runs the example, the gpu_kron_distributed suite (and
# SUITES after it, while DEADLINE seconds allow), then the benchmark (CSV in OUT; BENCH=0 skips).
#   bash bench/probes/session43-distributed.sh OUT
set -uo pipefail
out=${1:?OUT}
start=$(date +%s)
deadline=${DEADLINE:-420}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
nvidia-smi -L >"$out/devices.txt"
cmake -S . -B build-final -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_BENCH=ON -DSTROP_BUILD_EXAMPLES=ON -DSTROP_BUILD_GPU_TESTS=ON \
  >"$out/build-$dev.log" 2>&1
targets="strop_gpu_tests example_kron_split"
[ "${BENCH:-1}" = 1 ] && targets="$targets kron_distributed_bench"
cmake --build build-final -j 16 --target $targets \
  >>"$out/build-$dev.log" 2>&1 || { echo "build failed"; tail -40 "$out/build-$dev.log"; exit 1; }
echo "built in $(($(date +%s) - start)) s"
log="$out/gpu-tests-${TAG:-session43}-$dev.log"
./build-final/examples/example_kron_split | tee "$out/example-kron-split-${TAG:-session43}-$dev.txt"
for s in gpu_kron_distributed ${SUITES:-}; do
  if [ $(($(date +%s) - start)) -gt "$deadline" ]; then echo "skipped $s (deadline)"; continue; fi
  t0=$(date +%s)
  echo "== $s" >>"$log"
  stdbuf -oL ./build-final/tests/strop_gpu_tests --run_test="$s" --report_level=short \
    --log_level=error >>"$log" 2>&1
  echo "== $s exit $? ($(($(date +%s) - t0)) s)" | tee -a "$log"
done
tail -5 "$log"
if [ "${BENCH:-1}" = 1 ]; then
  timeout $((deadline + 150 - ($(date +%s) - start))) ./build-final/bench/kron_distributed_bench \
    --reps "${REPS:-10}" --csv "$out/kron-distributed-bench-${TAG:-session43}-$dev.csv" ${BENCH_ARGS:-} |
    tee "$out/kron-distributed-bench-${TAG:-session43}-$dev.txt"
fi
sed -i 's/\x1b\[[0-9;]*m//g' "$out"/*.log
exit 0
