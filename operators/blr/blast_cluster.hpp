#pragma once
// Internal: BLAST's three stages in one launch, the intermediates on chip (issue #9: "full
// fusion of the stages for small ranks where it wins"). A cluster of max(K, L) CTAs takes 64
// signals at a time; CTA q
// 1. computes Z1_q = V_q X_q (r x 64) into its shared memory (tensor cores, fp32 sums rounded
//    to 16 bits, as the plans keep Z1),
// 2. after a cluster barrier, couples Z2_q = sum_l diag(s_ql) Z1_l, reading every CTA's Z1_l
//    through distributed shared memory (fp32 sums, rounded once),
// 3. and writes Y_q = alpha U_q Z2_q + beta Y_q.
// Nothing but X, the weights and Y touches global memory, and one launch replaces three
// (blast_cluster.cu). Launch interface without the operator headers, so that the .cu does not
// see Eigen; blr_gemm_cuda.cpp fills it.
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// A BLAST of K x L blocks of h x w, rank r, on `batch` signal-contiguous 16-bit signals (X
// n x batch, Y m x batch, column-major with leading dimensions x_ld, y_ld). The weights as the
// plans keep them on the device: left = U_0, U_1, ... (column-major h x r each), right = V_0,
// V_1, ... (column-major r x w each), diagonals = s_{k,l} at (k L + l) r (the operator's own
// layout).
struct BlastClusterArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void* left = nullptr;
  const void* right = nullptr;
  const void* diagonals = nullptr;
  Index row_blocks = 0, col_blocks = 0, rank = 0, height = 0, width = 0, batch = 0;
  Index x_ld = 0, y_ld = 0;
  float alpha = 1.0f, beta = 0.0f;
};

// Whether the kernel runs a grid of this shape on the current device: clusters (sm_90), at
// most kBlastClusterMaxBlocks CTAs per cluster (16 needs the non-portable size), and the two
// r x 64 intermediates plus the operand stages in one CTA's shared memory.
inline constexpr Index kBlastClusterMaxBlocks = 16;
bool blast_cluster_takes(Index row_blocks, Index col_blocks, Index rank);

// Runs Y = alpha A X + beta Y for a (blast_cluster_takes) on Storage values (half, bfloat16).
template <class Storage>
void blast_cluster_run(const BlastClusterArgs& a, Context& ctx);

}  // namespace strop::detail
