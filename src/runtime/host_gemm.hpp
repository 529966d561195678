#pragma once
// Internal: host products on Eigen (the dense, block low-rank and KS leaves) and the
// element-wise updates, on the fastest Eigen maps the views allow.
#include <Eigen/Core>

#include "strop/core/device_matrix.hpp"
#include "strop/core/eigen_map.hpp"
#include "strop/core/op.hpp"

namespace strop::detail {

// f(x, y) with Eigen's views of X and Y for an update of Y (a product or a sum): both column-major
// or both row-major with unit inner stride where X and Y are (Eigen's GEMM then reads and writes
// them in place; through a dynamic inner stride it packs and scatters element by element, 6-9x
// slower on 32 x 32 by 32 x 2^18 float products), the strided maps otherwise. Three
// instantiations of f, not nine: mixed layouts take the strided maps.
template <class T, class F>
void with_eigen_maps(ConstView<T> X, MatrixView<T> Y, F&& f) {
  using ColMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (X.row_stride == 1 && Y.row_stride == 1) {
    return f(Eigen::Map<const ColMajor, Eigen::Unaligned, Eigen::OuterStride<>>(
                 X.data, X.rows, X.cols, Eigen::OuterStride<>(X.col_stride)),
             Eigen::Map<ColMajor, Eigen::Unaligned, Eigen::OuterStride<>>(
                 Y.data, Y.rows, Y.cols, Eigen::OuterStride<>(Y.col_stride)));
  }
  if (X.col_stride == 1 && Y.col_stride == 1) {
    return f(Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>(
                 X.data, X.rows, X.cols, Eigen::OuterStride<>(X.row_stride)),
             Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>(
                 Y.data, Y.rows, Y.cols, Eigen::OuterStride<>(Y.row_stride)));
  }
  f(eigen_map(X), eigen_map(Y));
}

// y = alpha * a x + beta * y on Eigen expressions; beta == 0 overwrites y, so NaNs already in
// it do not leak.
template <class T, class A, class X, class Y>
void gemm_update(const A& a, const X& x, Y y, T alpha, T beta) {
  if (beta == T(0)) {
    y.noalias() = alpha * (a * x);
  } else {
    if (beta != T(1)) y *= beta;
    y.noalias() += alpha * (a * x);
  }
}

// y = alpha * op(a) x + beta * y on Eigen expressions.
template <class T, class A, class X, class Y>
void gemm(Op op, const A& a, const X& x, Y y, T alpha, T beta) {
  switch (op) {
    case Op::NoTrans:
      return gemm_update(a, x, y, alpha, beta);
    case Op::Trans:
      return gemm_update(a.transpose(), x, y, alpha, beta);
    case Op::Adjoint:
      return gemm_update(a.adjoint(), x, y, alpha, beta);
  }
}

// Y = alpha * op(A) X + beta * Y on host views, A a column-major matrix (a HostMatrix or a
// contiguous block of one), through with_eigen_maps: in place at Eigen's full speed where X
// and Y share a unit-stride layout. Compiled once per scalar (host_gemm.cpp): the leaves that
// call it share its Eigen instantiations instead of compiling them each (3 map kinds x 3 ops x
// 4 scalars of Eigen's GEMM, about 50 s of compile time per file).
template <class T>
void host_gemm(Op op, Eigen::Map<const HostMatrix<T>> A, ConstView<T> X, MatrixView<T> Y, T alpha,
               T beta);

template <class T>
void host_gemm(Op op, const HostMatrix<T>& A, ConstView<T> X, MatrixView<T> Y, T alpha, T beta) {
  host_gemm(op, Eigen::Map<const HostMatrix<T>>(A.data(), A.rows(), A.cols()), X, Y, alpha, beta);
}

}  // namespace strop::detail
