#!/usr/bin/env bash
# Builds the binaries that bench/probes/kron-session55-run.sh compares, here (no GPU needed),
# into build-carry/bins.tar.gz for the device's carry: this tree's kron_bench and
# strop_gpu_tests as build-final/{bench,tests} (no base: the run skips it, as this tree is the
# baseline), and this tree with bench/probes/kron-square-movers-tried.patch applied as
# build-final/{movers,movers-tests}. Uses the configured build folder BUILD (default build:
# Release, CMAKE_CUDA_ARCHITECTURES=90); the patch is reverted afterwards, whatever happens.
# On the device: mkdir -p build-final && tar xzf build-carry/bins.tar.gz -C build-final.
set -euo pipefail
build=${BUILD:-build}
stage="build-carry/stage"
patch=bench/probes/kron-square-movers-tried.patch
git diff --quiet -- operators src || {
  echo "operators/ or src/ has uncommitted changes: commit or stash them first" >&2
  exit 1
}
rm -rf "$stage" && mkdir -p "$stage"/{bench,tests,movers,movers-tests}
targets() { flock /tmp/strop-build.lock cmake --build "$build" -j"${JOBS:-2}" --target strop_gpu_tests kron_bench; }
targets
cp "$build/bench/kron_bench" "$stage/bench/"
cp "$build/tests/strop_gpu_tests" "$stage/tests/"
git apply "$patch"
revert() { git apply -R "$patch"; }
trap revert EXIT
targets
cp "$build/bench/kron_bench" "$stage/movers/" && cp "$build/tests/strop_gpu_tests" "$stage/movers-tests/"
strip "$stage"/*/*
tar czf build-carry/bins.tar.gz -C "$stage" .
ls -l build-carry/bins.tar.gz
