# Sourced by the probe run scripts of sessions 28 and 29 (the earlier ones keep their own copy
# as a record of what ran): builds TARGETS (default strop_gpu_tests blr_bench) in build-gpu for
# sm_90 with 16 jobs, prints the errors and warnings and the build time, and sets `dev` (the
# GPU's name for file names) and `tests` (the GPU test binary).
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
build_start=$(date +%s)
cmake --build build-gpu -j 16 --target ${TARGETS:-strop_gpu_tests blr_bench} 2>&1 |
  grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - build_start)) s"
tests=./build-gpu/tests/strop_gpu_tests
