#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, run `strop demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
./build/strop demo "$@"
