#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer and UndefinedBehaviorSanitizer: out-of-bounds
# accesses, use after free, leaks, signed overflow, misaligned or null accesses, bad shifts.
# Builds the library (without CUDA: the sanitizers instrument host code) and the unit tests
# into build-sanitize-cpu (-O1 -g1), then runs every CTest test; any report fails the run.
#   scripts/sanitize.sh [CTEST ARGUMENTS...]      e.g. -R unit.kron
# GPU kernels are checked by scripts/gpu-sanitize.sh (compute-sanitizer) on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${STROP_JOBS:-$(nproc)}
# Every check stops the run, except misaligned accesses: those are reported and go on, so that
# scripts/ubsan.supp can suppress Eigen's deliberate ones (suppressions need a recoverable check).
sanitizers="-fsanitize=address,undefined"
flags="$sanitizers -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fsanitize-recover=alignment"
cmake -S . -B build-sanitize-cpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTROP_CUDA=OFF \
  -DSTROP_BUILD_BENCH=OFF -DSTROP_BUILD_GPU_TESTS=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$sanitizers" \
  "-DCMAKE_SHARED_LINKER_FLAGS=$sanitizers"
cmake --build build-sanitize-cpu -j "$jobs"
cd build-sanitize-cpu
# allocator_may_return_null: an allocation too large for the machine throws std::bad_alloc as
# it would without ASan (the tests check that such requests become typed errors).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/../scripts/ubsan.supp}
# install.find_package builds a consumer project without the sanitizers' runtime: not run here.
ctest --output-on-failure -j "$jobs" -E '^install[.]' "$@"
