#!/usr/bin/env bash
# The Strassen-Tile GPU tests and stl_bench on a GPU machine (see gpu-bench.sh):
#   scripts/gpu-stl.sh OUTPUT_DIR [stl_bench arguments, e.g. --sizes 8192 --reps 20]
exec "$(dirname "$0")/gpu-bench.sh" stl "$@"
