#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, run `strop demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The same CUDA architectures as scripts/test.sh, so that running both builds once.
bash scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}"
./build/strop demo "$@"
