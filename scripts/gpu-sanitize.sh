#!/usr/bin/env bash
# On a GPU machine: runs GPU test suites under NVIDIA's compute-sanitizer, which checks every
# kernel (ours and cuBLAS's) for out-of-bounds and misaligned accesses (memcheck), shared-memory
# races (racecheck), reads of uninitialized device memory (initcheck) or misused barriers
# (synccheck). The tests pass bounds and padding checks of their own; the sanitizer also sees
# reads past an allocation and hazards that happened to give the right numbers.
#   scripts/gpu-sanitize.sh OUT [TOOL] [SUITE...]
# TOOL: memcheck (default), racecheck, initcheck or synccheck; SUITEs: Boost.Test suites or
# cases, as --run_test takes them (gpu_kron/pairs_of_32_factors_in_16_bits, gpu_ks/fused_chain*;
# default: every GPU suite, cheapest first). Each suite's log is OUT/sanitize-TOOL-SUITE.log,
# and OUT/sanitize-TOOL-summary.txt lists each suite's exit status and error count.
# DEADLINE (seconds since the start, default 540) stops before a suite that would begin after it;
# SUITE_LIMIT (seconds, default 300) stops one suite; JOBS (default 1) suites run at once. The
# build (build-sanitize, sm_90, with line information for the reports) is reused when it is there.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-sanitize.sh OUT [TOOL] [SUITE...]}
tool=${2:-memcheck}
shift $(($# < 2 ? $# : 2))
suites=${*:-gpu_views gpu_random_expressions gpu_dense gpu_devices gpu_gemm_tuning gpu_stl \
gpu_stl_kernels gpu_concurrency gpu_kron_distributed gpu_transforms gpu_factorize gpu_kron gpu_ks \
gpu_blr}
start=$(date +%s)
deadline=${DEADLINE:-540}
mkdir -p "$out"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_FLAGS=-lineinfo -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=OFF \
  -DSTROP_BUILD_GPU_TESTS=ON >"$out/sanitize-build.log" 2>&1 &&
  cmake --build build-sanitize -j 16 --target strop_gpu_tests >>"$out/sanitize-build.log" 2>&1 ||
  {
    tail -30 "$out/sanitize-build.log"
    exit 1
  }
echo "built in $(($(date +%s) - start)) s"
summary="$out/sanitize-$tool-summary.txt"
# Racecheck checks shared memory; its hazard reports are errors. Leaks are not checked: the
# library keeps cached device copies and workspaces for the life of the process on purpose.
options=(--tool "$tool" --error-exitcode 86 --print-limit 40)
[ "$tool" = memcheck ] && options+=(--leak-check no)
[ "$tool" = racecheck ] && options+=(--racecheck-report hazard)
# One suite under the sanitizer: its log, and a line in the summary.
run_suite() {
  local suite=$1 log t0 status errors
  if [ $(($(date +%s) - start)) -gt "$deadline" ]; then
    echo "$suite: not run (deadline)" | tee -a "$summary"
    return
  fi
  log="$out/sanitize-$tool-${suite//[^A-Za-z0-9_]/-}.log"
  t0=$(date +%s)
  timeout "${SUITE_LIMIT:-300}" "$sanitizer" "${options[@]}" ./build-sanitize/tests/strop_gpu_tests \
    --run_test="$suite" --report_level=short --log_level=test_suite >"$log" 2>&1
  status=$?
  errors=$(grep -m1 -oE "(ERROR|RACECHECK) SUMMARY: [0-9]+ [a-z]+" "$log" || echo "no summary")
  echo "$suite: exit $status, $errors, $(($(date +%s) - t0)) s" | tee -a "$summary"
}
# JOBS suites run at once (default 1): the sanitizers spend most of their time on the host, and
# the small kernels of the tests leave the GPU room for several processes.
jobs=${JOBS:-1}
for suite in $suites; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n
  done
  run_suite "$suite" &
done
wait
sed -i 's/\x1b\[[0-9;]*m//g' "$out"/sanitize-*.log
