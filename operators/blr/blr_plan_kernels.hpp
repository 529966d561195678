#pragma once
// Internal: the small device kernels the BLR GEMM plans need besides cuBLAS
// (blr_plan_kernels.cu): the 4-D strided copy of the unfused baselines' permutations, and
// batched products with small inner and outer sizes (BLAST's coupling stage).
#include <cstddef>

#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// dst[sum i_d dst_strides[d]] = src[sum i_d src_strides[d]] for i < dims (values of
// Storage: float, double, half or bfloat16), or alpha src + beta dst when `scaled`.
struct StridedCopy {
  const void* src;
  void* dst;
  Index dims[4], src_strides[4], dst_strides[4];
  bool scaled;
  double alpha, beta;
};
template <class Storage>
void strided_copy(const StridedCopy& c, Context& ctx);

// C_j = alpha A_j op(B_j) + beta C_j for j < batch: A_j m x k and C_j m x n column-major
// (leading dimensions lda, ldc; A not transposed), op(B_j) k x n, B_j column-major with ldb
// (k x n, or n x k when trans_b); consecutive j `stride_*` values apart. For k, n <=
// kSmallInnerMax and many rows m: one pass over A and C at close to the copy bandwidth,
// where cuBLAS's batched GEMM of b x b couplings per rank index runs far slower. 16-bit
// values with 8 < max(k, n) and k, n <= 16, A and C 16-byte aligned, leading dimensions and
// strides multiples of 8 run on tensor cores (fp32 accumulation) unless `tensor_cores` is
// false; the rest on CUDA cores in fp32 (fp64 for double).
constexpr Index kSmallInnerMax = 32;
struct SmallInnerGemm {
  const void* a;
  const void* b;
  void* c;
  Index m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
  bool trans_b;
  double alpha, beta;
  bool tensor_cores;
};
template <class Storage>
void small_inner_gemm(const SmallInnerGemm& g, Context& ctx);

// The tensor-core kernel (small_inner_mma.cu) and when it applies.
bool small_inner_mma_takes(const SmallInnerGemm& g, std::size_t value_bytes);
template <class Storage>
void small_inner_mma(const SmallInnerGemm& g, Context& ctx);

}  // namespace strop::detail
