#!/usr/bin/env bash
# The factorization's GPU tests and factorize_bench on a GPU machine (see gpu-bench.sh):
#   scripts/gpu-factorize.sh OUTPUT_DIR [factorize_bench arguments, e.g. --targets --reps 3]
exec "$(dirname "$0")/gpu-bench.sh" factorize "$@"
