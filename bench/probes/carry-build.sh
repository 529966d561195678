#!/usr/bin/env bash
# Builds two versions of the GPU binaries here (no GPU needed) for one device call that
# compares them: this tree into build-carry/stage/main/ and this tree with PATCH applied into
# build-carry/stage/patched/ (each gets kron_bench and strop_gpu_tests, or TARGETS), packed as
# build-carry/bins.tar.gz; the patch is reverted afterwards, whatever happens. Uses the
# configured build folder BUILD (default build: Release, CMAKE_CUDA_ARCHITECTURES=90).
#   bash bench/probes/carry-build.sh PATCH
# On the device (carry build-carry/bins.tar.gz):
#   mkdir -p build-final && tar xzf build-carry/bins.tar.gz -C build-final
set -euo pipefail
patch=${1:?usage: bench/probes/carry-build.sh PATCH}
build=${BUILD:-build}
read -r -a targets <<<"${TARGETS:-kron_bench strop_gpu_tests}"
stage="build-carry/stage"
git diff --quiet -- operators src include tests || {
  echo "operators/, src/, include/ or tests/ have uncommitted changes: commit or stash them" >&2
  exit 1
}
rm -rf "$stage" && mkdir -p "$stage"/{main,patched}
build_into() { # DIR: the targets, built and copied there, stripped
  flock /tmp/strop-build.lock cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
  local t
  for t in "${targets[@]}"; do
    find "$build" -name "$t" -type f -perm -u+x -exec cp {} "$stage/$1/" \;
  done
  strip "$stage/$1"/*
}
build_into main
git apply "$patch"
trap 'git apply -R "$patch"' EXIT
build_into patched
tar czf build-carry/bins.tar.gz -C "$stage" .
ls -l build-carry/bins.tar.gz
