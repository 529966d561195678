#pragma once
// Internal: helpers of the GEMM-based KS paths (ks_group_kernels.cu).
#include "strop/core/context.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// Pointer arrays of a grouped GEMM over the a*d groups g = i*d + j of a KS factor.
// Offsets are in elements of `element` bytes.
struct GroupPointerArgs {
  const char* x;
  char* y;
  const char* w;
  Index x_stride_i, x_stride_j, y_stride_i, y_stride_j, w_stride;
  Index groups, d, element;
  const void** x_out;
  void** y_out;
  const void** w_out;
};
void ks_group_pointers(const GroupPointerArgs& args, Context& ctx);

// The row permutation between a KS row order (i, m, j) with m < size and the grouped
// order (i, j, m): dst = alpha * P src + beta * dst, P to the grouped order when
// to_grouped, back otherwise. Also for half/bfloat16 (fp32 alpha, beta).
template <class T>
void ks_permute_rows(ComputeScalar<T> alpha, ConstView<T> src, ComputeScalar<T> beta,
                     MatrixView<T> dst, Index size, Index d, bool to_grouped, Context& ctx);

// dst = src for a rows x cols matrix whose memory orders differ (one is batch-contiguous,
// the other batch-first): a transpose through 32 x 32 shared tiles, so that both sides are
// read and written along their contiguous axis. Any element of 2, 4, 8 or 16 bytes.
void ks_relayout(const void* src, Index s_rs, Index s_cs, void* dst, Index d_rs, Index d_cs,
                 Index rows, Index cols, int element_bytes, Context& ctx);

}  // namespace strop::detail
