#pragma once
// Internal: the two small device kernels the BLR GEMM plans need besides cuBLAS
// (blr_plan_kernels.cu): the pointer arrays of a two-level batched GEMM, and the 4-D strided
// copy of the unfused baselines' permutations.
#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// Operands q = 0, 1, 2 (A, B, C): out[q][e] = base[q] + (e / inner) outer[q] +
// (e % inner) stride[q], offsets in bytes, for e < count.
struct TwoLevelPointers {
  char* base[3];
  Index outer[3], stride[3];
  Index inner, count;
  char** out[3];
};
void make_two_level_pointers(const TwoLevelPointers& p, Context& ctx);

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

}  // namespace strop::detail
