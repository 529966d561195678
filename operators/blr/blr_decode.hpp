#pragma once
// Internal: the decode path of the BLR GEMM plans (issue #9): a plan stage whose product has
// at most kDecodeTokens tokens is a batch of skinny products, C (tokens x cols) =
// Act (tokens x k) W (k x cols), bound by reading the weights W once. cuBLAS's batched GEMMs
// take several times that at B = 1; this kernel (blr_decode.cu) streams W with every
// multiprocessor busy, the few token rows of Act staged in shared memory, fp32 accumulation.
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

inline constexpr Index kDecodeTokens = 16;

// Entry e of the batch: each operand starts at its base + (e / inner) * outer + (e % inner)
// * stride values (inner = 0: e * stride). W must have unit stride along its columns.
struct SkinnyGemm {
  const void* act = nullptr;
  const void* w = nullptr;
  void* c = nullptr;
  Index tokens = 0, cols = 0, k = 0;
  Index act_token_stride = 0, act_k_stride = 0;  // Act(i, kk) at i ts + kk ks
  Index w_k_stride = 0;                          // W(kk, j) at kk ws + j
  Index c_token_stride = 0, c_col_stride = 0;    // C(i, j) at i ts + j cs
  Index batch = 1, inner = 0;
  Index act_stride = 0, act_outer = 0, w_stride = 0, w_outer = 0, c_stride = 0, c_outer = 0;
  float alpha = 1, beta = 0;  // C = alpha Act W + beta C
};

// Runs g on half or bfloat16 values (tokens <= kDecodeTokens).
template <class Storage>
void skinny_gemm(const SkinnyGemm& g, Context& ctx);

}  // namespace strop::detail
