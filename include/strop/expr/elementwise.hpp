#pragma once
// Element-wise batch updates used by expression nodes and simple leaves, on the host
// (Eigen) and on the device (small CUDA kernels). One implementation per memory space.
#include "strop/core/context.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// Y = alpha * f(X) + beta * Y with f = conj when conjugate_x, else identity.
// beta == 0 overwrites Y (NaNs already in Y do not propagate), as in BLAS.
template <class T>
void axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, Context& ctx);

#if STROP_HAVE_CUDA
// Y[i, :] = alpha X[from[i], :] + beta Y[i, :] on device views, `from` a device array of
// Y.rows row indices of X (a permutation's gather).
template <class T>
void device_gather_rows(T alpha, ConstView<T> X, const Index* from, T beta, MatrixView<T> Y,
                        Context& ctx);
// Y[i, :] = alpha s[i] X[i, :] + beta Y[i, :] on device views, `row_scale` a device array of
// Y.rows values s (a diagonal's application).
template <class T>
void device_scale_rows(T alpha, const T* row_scale, ConstView<T> X, T beta, MatrixView<T> Y,
                       Context& ctx);
// Y = X + beta Y between float and half/bfloat16 device views (From or To is float),
// computed in float and rounded once to To (the reduced-precision fallbacks' conversions).
template <class From, class To>
void device_convert(ConstView<From> X, float beta, MatrixView<To> Y, Context& ctx);
#endif

// Y = beta * Y (beta == 0 writes zeros).
template <class T>
void scale(T beta, MatrixView<T> Y, Context& ctx);

}  // namespace strop::detail
