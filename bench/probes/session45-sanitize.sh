#!/usr/bin/env bash
# Session 45 on a GPU machine: racecheck of the shared-memory kernels that session 44 left
# unchecked (one test case per kernel family, several processes at once), then initcheck.
#   bench/probes/session45-sanitize.sh PHASE   (PHASE: race | init | race-long)
set -uo pipefail
cd "$(dirname "$0")/../.."
phase=$1
logs=/tmp/sanitize-$phase
rm -rf "$logs"
case $phase in
race)
  JOBS=12 SUITE_LIMIT=240 DEADLINE=330 bash scripts/gpu-sanitize.sh "$logs" racecheck \
    'gpu_kron/equal_square_factors_fused_in_place<float>' \
    'gpu_blr/skinny_layers_chained_without_syncs_match_cpu' \
    'gpu_blr/fused_path_matches_cpu<Eigen__half>' \
    'gpu_ks/sixteen_bit_tile_configurations<Eigen__half>' \
    'gpu_ks/sixteen_bit_persistent_tiles<Eigen__half>' \
    'gpu_blr/small_inner_products_match_a_loop*' \
    'gpu_blr/strided_copies_match_a_loop*' \
    'gpu_blr/decode_and_skinny_paths_match_cpu*' \
    'gpu_kron/half_and_bfloat16_signals' \
    'gpu_kron/larger_batches<float>' \
    'gpu_kron_distributed/many_tiles_and_signals<float>' \
    'gpu_factorize/jacobi_block_svd_matches_eigen<float>' \
    'gpu_factorize/jacobi_svd_blocks_at_the_shared_memory_limit' \
    'gpu_transforms/hadamard_kernel_matches_the_cpu_chain' \
    'gpu_transforms/hadamard_kernel_takes_strided_and_misaligned_views' \
    'gpu_ks/strided_gemm_through_copies<float>' \
    'gpu_ks/small_batch_kernel<float>' \
    'gpu_ks/sixteen_bit_chains<Eigen__half>' \
    'gpu_blr/decode_calls_in_a_row_leave_their_workspace_clean'
  ;;
init)
  JOBS=14 SUITE_LIMIT=400 DEADLINE=200 bash scripts/gpu-sanitize.sh "$logs" initcheck
  ;;
race-long)
  shift
  JOBS=12 SUITE_LIMIT=${LIMIT:-500} DEADLINE=60 bash scripts/gpu-sanitize.sh "$logs" racecheck "$@"
  ;;
esac
nvidia-smi -L >"$logs/device.txt"
sort "$logs"/sanitize-*-summary.txt
tar czf "$OUT/sanitize-$phase.tgz" -C /tmp "sanitize-$phase"
