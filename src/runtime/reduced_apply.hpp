#pragma once
// Internal: the checks and the host path shared by the apply_reduced_precision overloads
// (half/bfloat16 signals through a float operator; strassen_tile_reduced.cpp,
// ks_chain_reduced.cpp).
#include <cmath>

#include "strop/core/buffer.hpp"
#include "strop/core/context.hpp"
#include "strop/core/error.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"
#include "strop/expr/algebra.hpp"
#include "strop/expr/elementwise.hpp"

namespace strop::detail {

template <class Storage, class Operator>
void check_reduced(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                   float alpha, float beta) {
  const Index in_rows = op == Op::NoTrans ? A.cols() : A.rows();
  const Index out_rows = op == Op::NoTrans ? A.rows() : A.cols();
  require<ShapeError>(X.rows == in_rows && Y.rows == out_rows && Y.cols == X.cols,
                      Operator::type_name, " (reduced precision) ", A.rows(), "x", A.cols(), " as ",
                      to_string(op), " maps ", in_rows, "xB to ", out_rows, "xB, got X ", X.rows,
                      "x", X.cols, " and Y ", Y.rows, "x", Y.cols);
  require<ShapeError>(X.space == Y.space, Operator::type_name,
                      " (reduced precision): X and Y must both be in host or both in device",
                      " memory");
  check_signal_strides(Operator::type_name, X, Y);
  require<ShapeError>(!may_overlap(X, ConstView<Storage>(Y)), Operator::type_name,
                      " (reduced precision): Y overlaps X");
  require<NumericalError>(std::isfinite(alpha) && std::isfinite(beta), Operator::type_name,
                          " (reduced precision): alpha and beta must be finite");
}

// Y = alpha op(A) X + beta Y computed in float on the host, rounded once.
template <class Storage, class Operator>
void apply_on_host(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                   float alpha, float beta, Context& ctx) {
  const HostMatrix<float> x = eigen_map(X).template cast<float>();
  HostMatrix<float> y(Y.rows, Y.cols);
  A.apply(op, view(x), view(y), alpha, 0.0f, ctx);
  auto y_out = eigen_map(Y);
  for (Index c = 0; c < Y.cols; ++c)
    for (Index r = 0; r < Y.rows; ++r)
      y_out(r, c) = Storage(beta == 0 ? y(r, c) : y(r, c) + beta * float(y_out(r, c)));
}

// The common start of every apply_reduced_precision: checks the arguments, then handles an
// empty result and host data (through float). True when nothing is left for the device.
// Callers hold a DeviceScope(X.space == MemorySpace::Device) around it and their device work.
template <class Storage, class Operator>
bool reduced_done_without_device(const Operator& A, Op op, ConstView<Storage> X,
                                 MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  static_assert(is_reduced_precision_v<Storage>, "half or bfloat16 signals");
  check_reduced(A, op, X, Y, alpha, beta);
  if (Y.rows == 0 || Y.cols == 0) return true;
  if (X.space == MemorySpace::Host) {
    apply_on_host(A, op, X, Y, alpha, beta, ctx);
    return true;
  }
  check_device_views(Operator::type_name, X, Y, ctx);
#if STROP_HAVE_CUDA
  // An empty sum, or alpha = 0 (X is not read, as in OperatorBase::apply): Y = beta Y.
  if (X.rows == 0 || alpha == 0.0f) {
    TempMatrix<float> zero(Y.rows, Y.cols, layout_of(Y), MemorySpace::Device, ctx);
    scale(0.0f, zero.view, ctx);
    device_convert(ConstView<float>(zero.view), beta, Y, ctx);
    return true;
  }
#endif
  return false;
}

#if STROP_HAVE_CUDA
// Device signals through float copies around the float operator (three passes over memory
// more than a native 16-bit path would make): the fallback where no 16-bit kernel applies.
template <class Storage, class Operator>
void apply_through_float(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                         float alpha, float beta, Context& ctx) {
  const Layout layout = layout_of(Y);
  TempMatrix<float> x(X.rows, X.cols, layout, MemorySpace::Device, ctx);
  TempMatrix<float> y(Y.rows, Y.cols, layout, MemorySpace::Device, ctx);
  device_convert(X, 0.0f, x.view, ctx);
  A.apply(op, ConstView<float>(x.view), y.view, alpha, 0.0f, ctx);
  device_convert(ConstView<float>(y.view), beta, Y, ctx);
}
#endif

}  // namespace strop::detail
