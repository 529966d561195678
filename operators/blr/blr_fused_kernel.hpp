#pragma once
// Internal: the launch interface of the one-launch tensor-core plan kernel (blr_fused.cu),
// kept free of the operator headers so that the .cu does not see Eigen. blr_fused_cuda.cpp
// fills it from a plan (blr_fused.hpp).
#include "strop/core/context.hpp"

namespace strop::detail {

// Array slots, as PlanArray numbers them (blr_gemm_plan.hpp).
inline constexpr int kFusedArrays = 12;
inline constexpr int kFusedZ1 = 2, kFusedZ2 = 3;
inline constexpr int kFusedMaxSteps = 3;
// Steps whose n and k are both at most this (BLAST's b x b couplings per rank index) run on
// CUDA cores, one thread per row of C; the others on tensor cores in 64 x 64 tiles.
inline constexpr int kFusedSmallInner = 16;

// A column-major operand: entry e starts at offset + e stride; element (row, col) at
// row + col ld.
struct FusedOperand {
  int array = 0;
  long long offset = 0, ld = 0, stride = 0;
  int vector = 0;  // set by the launch: 16-byte loads and stores apply (aligned everywhere)
};

// C_e = op(A_e) op(B_e) (m x n, inner dimension k) for each entry e < batch; where C is Y
// (to_y), C_e = alpha op(A_e) op(B_e) + beta C_e.
struct FusedStep {
  FusedOperand a, b, c;
  int trans_a = 0, trans_b = 0;
  int m = 0, n = 0, k = 0;
  long long batch = 0;
  int to_y = 0;
  int small = 0;  // set by the launch: n, k <= kFusedSmallInner, the CUDA-core form
  // Set by the launch (tensor-core form): the tile grid, and the parts k is split into when
  // the tiles alone would leave blocks idle (each part's fp32 sums go to a workspace; the
  // block that finishes a tile last adds them up and writes C).
  int m_tiles = 0, n_tiles = 0, splits = 1;
  long long units = 0;  // set by the launch: tiles x splits, or blocks of rows (small form)
};

struct FusedArgs {
  void* arrays[kFusedArrays];  // Storage values; Z1 and Z2 set by the launch
  FusedStep steps[kFusedMaxSteps];
  int count = 0;
  float alpha = 1, beta = 0;
  long long z1_size = 0, z2_size = 0;  // intermediates (Storage values)
  float* partials = nullptr;           // set by the launch: the split steps' fp32 sums
  int* counters = nullptr;             // set by the launch: parts done per tile, left zeroed
};

// Tiles of one step that can be split (the counters' workspace).
inline constexpr int kFusedCounters = 4096;

// Runs the steps in order in one cooperative launch (a grid-wide barrier between steps) for
// Storage half or bfloat16; the intermediates Z1 and Z2 (rounded to Storage, as the cuBLAS
// plans keep them) and the split steps' sums in one stream-ordered allocation, the counters
// in a persistent workspace of the context (no split while a graph captures its creation).
template <class Storage>
void launch_blr_fused(FusedArgs& a, Context& ctx);

}  // namespace strop::detail
