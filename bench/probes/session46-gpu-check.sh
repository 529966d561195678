#!/usr/bin/env bash
# Session 46's GPU call: (1) initcheck probe: does the sanitizer see cuBLAS's stores; (2) the
# new tests of devices with less shared memory (emulated by a cap); (3) every GPU suite, which
# includes what session 45 changed and could not run (Kron pair16/square and BLR skinny
# cluster kernels after the sm_80 changes, the Hadamard view test that fills Y's padding, the
# shared-memory DeviceError test). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi -L | tee "$OUT/device.txt"
# The probe under initcheck took about 580 s on an H100 (4.5 million reports): only with PROBE=1.
if [ "${PROBE:-0}" = 1 ]; then
  (cd bench/probes && nvcc -O2 -arch=sm_90 initcheck-cublas-store.cu -lcublas -o /tmp/probe) &&
    /tmp/probe >"$OUT/probe-plain.log" 2>&1 &&
    compute-sanitizer --tool initcheck --print-limit 3 /tmp/probe >/tmp/probe-init.log 2>&1
  grep -E 'case|Uninit|  at |SUMMARY' /tmp/probe-init.log |
    sed -E 's/\(T1::Params\)//; s/\+0x[0-9a-f]+//' | tee "$OUT/probe-initcheck.log"
fi
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_EXAMPLES=OFF -DSTROP_BUILD_GPU_TESTS=ON >/tmp/build.log 2>&1 &&
  cmake --build build-gpu -j 16 --target strop_gpu_tests >>/tmp/build.log 2>&1 || {
  tail -20 /tmp/build.log
  exit 1
}
echo "built in $(($(date +%s) - t0)) s"
# The new cases first: devices with less shared memory, emulated (session 46).
./build-gpu/tests/strop_gpu_tests --report_level=short \
  --run_test='gpu_ks/kernels_on_devices_with_less_shared_memory*' \
  --run_test=gpu_kron/plans_on_devices_with_less_shared_memory \
  --run_test=gpu_transforms/transforms_on_devices_with_less_shared_memory 2>&1 |
  tee "$OUT/tests-small-shared.log" | tail -30
# Then every suite, as long as the call lasts (all suites: the launchers changed).
timeout "${ALL_LIMIT:-300}" ./build-gpu/tests/strop_gpu_tests --report_level=detailed \
  --log_level=test_suite >"$OUT/tests-all.log" 2>&1
echo "all suites: exit $?"
grep -E "error|failed|passed|aborted" "$OUT/tests-all.log" | grep -v "^.*Leaving\|Entering" | tail -40
