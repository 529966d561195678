#pragma once
// Internal: the GPU paths of KSFactor (operators/ks/*.cu, *_cuda.cpp).
#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/ks_algorithm.hpp"
#include "strop/operators/ks_pattern.hpp"

namespace strop::detail {

// Device pointers to a factor's values in the two orders the kernels read.
template <class T>
struct KSDeviceValues {
  const T* akld = nullptr;   // (a, b, c, d): the storage order, read by the fused kernel
  const T* adbc = nullptr;   // (a, d, b, c): one row-major b x c block per group, for GEMMs
  const T* dense = nullptr;  // the materialised rows() x cols() column-major matrix, or null
};

// Y = alpha op(K) X + beta Y on device views with the given algorithm (never Auto).
template <class T>
void ks_fused_apply(const KSPattern& p, const T* w_abcd, Op op, ConstView<T> X, MatrixView<T> Y,
                    T alpha, T beta, Context& ctx);
template <class T>
void ks_grouped_gemm_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X,
                           MatrixView<T> Y, T alpha, T beta, bool permute, Context& ctx);

}  // namespace strop::detail
