#pragma once
// The operator algebra: A * B, A + B, A - B, s * A, A.transpose(), A.adjoint(), and the
// application A * X of an expression to a batch of signals. Compile-time rewrites live
// here as more specialised overloads: A^T^T = A, s * (t * A) = (s t) A, and (in the KS
// headers) products of KS factors join one chain.
#include "strop/core/device_matrix.hpp"
#include "strop/expr/any_operator.hpp"
#include "strop/expr/product.hpp"
#include "strop/expr/scaled.hpp"
#include "strop/expr/sum.hpp"
#include "strop/expr/transposed.hpp"

namespace strop {

// ---- transpose / adjoint (customisation points found by ADL; leaves may overload) ----
template <Operator E>
Transposed<E, false> transpose_of(const E& e) {
  return Transposed<E, false>(e);
}
template <Operator E>
Transposed<E, true> adjoint_of(const E& e) {
  return Transposed<E, true>(e);
}
template <Operator E>
E transpose_of(const Transposed<E, false>& e) {
  return e.inner();
}
template <Operator E>
E adjoint_of(const Transposed<E, true>& e) {
  return e.inner();
}
template <Operator E>
requires(!is_complex_v<typename E::Scalar>) E adjoint_of(const Transposed<E, false>& e) {
  return e.inner();
}
template <Operator E>
requires(!is_complex_v<typename E::Scalar>) E transpose_of(const Transposed<E, true>& e) {
  return e.inner();
}
template <Operator E>
Scaled<E> operator*(typename E::Scalar s, const E& e);
template <Operator E>
auto transpose_of(const Scaled<E>& e) {
  return Scaled(e.factor(), transpose_of(e.inner()));
}
template <Operator E>
auto adjoint_of(const Scaled<E>& e) {
  return Scaled(strop::conj(e.factor()), adjoint_of(e.inner()));
}

template <Operator E>
auto transpose(const E& e) {
  return transpose_of(e);
}
template <Operator E>
auto adjoint(const E& e) {
  return adjoint_of(e);
}

// ---- composition, sums, scaling ----
template <Operator L, Operator R>
requires SameScalar<L, R> Product<L, R>
operator*(const L& lhs, const R& rhs) {
  return Product<L, R>(lhs, rhs);
}

template <Operator L, Operator R>
requires SameScalar<L, R> Sum<L, R>
operator+(const L& lhs, const R& rhs) {
  return Sum<L, R>(lhs, rhs);
}

template <Operator L, Operator R>
requires SameScalar<L, R> Sum<L, Scaled<R>>
operator-(const L& lhs, const R& rhs) {
  return Sum<L, Scaled<R>>(lhs, Scaled<R>(typename R::Scalar(-1), rhs));
}

template <Operator E>
Scaled<E> operator*(typename E::Scalar s, const E& e) {
  return Scaled<E>(s, e);
}
template <Operator E>
Scaled<E> operator*(typename E::Scalar s, const Scaled<E>& e) {
  return Scaled<E>(s * e.factor(), e.inner());
}
template <Operator E>
auto operator*(const E& e, typename E::Scalar s) {
  return s * e;
}
template <Operator E>
auto operator-(const E& e) {
  return typename E::Scalar(-1) * e;
}

// ---- application to signals ----
// Y = alpha * A X + beta * Y on host or device views.
template <Operator E>
void apply(const E& A, ConstView<typename E::Scalar> X, MatrixView<typename E::Scalar> Y,
           typename E::Scalar alpha = typename E::Scalar(1),
           typename E::Scalar beta = typename E::Scalar(0), Context& ctx = default_context()) {
  A.apply(Op::NoTrans, X, Y, alpha, beta, ctx);
}

// A * X for a host Eigen matrix X (any storage order): evaluates into a column-major matrix.
template <Operator E, class Derived>
requires std::is_same_v<typename E::Scalar, typename Derived::Scalar> HostMatrix<typename E::Scalar>
operator*(const E& A, const Eigen::MatrixBase<Derived>& X) {
  using T = typename E::Scalar;
  const HostMatrix<T> x = X;  // a packed copy only when X is an expression or strided
  // The result is allocated here, outside apply(): its size is checked the same way.
  const std::string what = detail::concat(detail::name_of(A), " (", A.rows(), "x", A.cols(),
                                          ") * X: its ", A.rows(), "x", x.cols(), " result");
  HostMatrix<T> y = detail::allocating_host(
      what, detail::checked_element_count(what.c_str(), A.rows(), x.cols()), "elements", sizeof(T),
      [&] { return HostMatrix<T>(A.rows(), x.cols()); });
  A.apply(Op::NoTrans, view(x), view(y));
  return y;
}

// A * X for a device matrix: evaluates on the GPU, on X's context, into a device matrix of
// X's layout.
template <Operator E>
DeviceMatrix<typename E::Scalar> operator*(const E& A, const DeviceMatrix<typename E::Scalar>& X) {
  Context& ctx = X.context();
  DeviceMatrix<typename E::Scalar> y(A.rows(), X.cols(), X.layout(), ctx);
  A.apply(Op::NoTrans, X.view(), y.view(), typename E::Scalar(1), typename E::Scalar(0), ctx);
  return y;
}

}  // namespace strop
