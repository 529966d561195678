#pragma once
// OperatorBase<Derived>: what every operator (leaf or expression node) offers, Eigen-style
// CRTP. A Derived class provides
//   using Scalar = T;                  one of the four scalar types
//   static constexpr const char* type_name;   the HDF5 strop_type ("dense", "product", ...)
//   Index rows() const, cols() const;
//   void apply_unchecked(Op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context&) const;
//        Y = alpha * op(A) X + beta * Y for op in {A, A^T, A^H}; shapes already checked.
//   double flops(Index batch) const;   real flops of one application (A X) to `batch` signals
// and, where applying A^T costs something else (a Kron of rectangular factors and the
// expressions around one), double transposed_flops(Index batch) const.
//   Index parameter_count() const;     stored scalars
// Building expressions never computes anything; apply() does.
#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "strop/core/buffer.hpp"
#include "strop/core/context.hpp"
#include "strop/core/eigen_map.hpp"
#include "strop/core/host_memory.hpp"
#include "strop/core/op.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/elementwise.hpp"

namespace strop {

template <class T>
using HostMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

template <class T>
class AnyOperator;

namespace detail {
// Real flops of adding one result into `outputs` x `batch` others: one per element, two for
// complex values (what a Sum or Stack adds to its parts' flops).
template <class T>
double addition_flops(Index outputs, Index batch) {
  return (is_complex_v<T> ? 2.0 : 1.0) * double(outputs) * double(batch);
}

// Real flops of one application of e^T (or e^H) to `batch` signals.
template <class E>
double transposed_flops(const E& e, Index batch) {
  if constexpr (requires { e.transposed_flops(batch); }) {
    return e.transposed_flops(batch);
  } else {
    return e.flops(batch);
  }
}

// Shape, space, aliasing and finiteness checks shared by every application.
template <class T>
void check_application(const char* name, Index rows, Index cols, Op op, ConstView<T> X,
                       MatrixView<T> Y, T alpha, T beta) {
  const Index out_rows = op == Op::NoTrans ? rows : cols;
  const Index in_rows = op == Op::NoTrans ? cols : rows;
  require<ShapeError>(X.rows == in_rows, name, " (", rows, "x", cols, ") as ", to_string(op),
                      " needs X with ", in_rows, " rows, got ", X.rows, "x", X.cols);
  require<ShapeError>(Y.rows == out_rows && Y.cols == X.cols, name, " (", rows, "x", cols, ") as ",
                      to_string(op), " maps ", X.rows, "x", X.cols, " to ", out_rows, "x", X.cols,
                      ", but Y is ", Y.rows, "x", Y.cols);
  require<ShapeError>(X.space == Y.space, name, ": X and Y must both be in host or both in",
                      " device memory");
  check_signal_strides(name, X, Y);
  require<ShapeError>(!may_overlap(X, ConstView<T>(Y)), name,
                      ": Y overlaps X; in-place application is not supported");
  require<NumericalError>(is_finite(alpha) && is_finite(beta), name,
                          ": alpha and beta must be finite");
}

// Device signals must be memory that ctx's device can use (see require_usable_on_device).
template <class T>
void check_device_views(const char* name, ConstView<T> X, MatrixView<T> Y, Context& ctx) {
  ctx.stream();  // ctx's device first: asking about memory must not start another device
  if (X.rows > 0 && X.cols > 0) require_usable_on_device(X.data, ctx, "X", name);
  require_usable_on_device(Y.data, ctx, "Y", name);
}

// The name errors give an operator: its HDF5 type, or for an AnyOperator the type of the node
// it holds ("product", not "any").
template <class E>
const char* name_of(const E& e) {
  if constexpr (requires { e.node_type(); }) {
    return e.node_type();
  } else {
    return E::type_name;
  }
}

// False when some part of the expression mixes the signals of a batch (a Strassen-Tile
// operator is linear in the whole batch, not column by column): such an operator has no
// dense matrix. Leaves say so through acts_per_signal(); nodes ask their children.
template <class E>
bool acts_per_signal(const E& e) {
  if constexpr (requires { e.acts_per_signal(); }) {
    return e.acts_per_signal();
  } else if constexpr (requires { e.children(); }) {
    for (const auto& child : e.children())
      if (!child.acts_per_signal()) return false;
    return true;
  } else {
    return true;
  }
}

}  // namespace detail

template <class Derived>
class OperatorBase {
 public:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  // Y = alpha * op(A) X + beta * Y, validated.
  template <class D = Derived>
  void apply(Op op, ConstView<typename D::Scalar> X, MatrixView<typename D::Scalar> Y,
             typename D::Scalar alpha = typename D::Scalar(1),
             typename D::Scalar beta = typename D::Scalar(0),
             Context& ctx = default_context()) const {
    detail::check_application(detail::name_of(derived()), derived().rows(), derived().cols(), op, X,
                              Y, alpha, beta);
    if (Y.rows == 0 || Y.cols == 0) return;
    const bool on_device = Y.space == MemorySpace::Device;
    detail::DeviceScope device_scope(on_device);
    if (on_device) detail::check_device_views(detail::name_of(derived()), X, Y, ctx);
    // An empty sum (alpha * 0 + beta * Y), or alpha = 0: as in BLAS, X is not read then, so
    // NaN or Inf in X does not reach Y.
    if (X.rows == 0 || alpha == typename D::Scalar(0)) return detail::scale(beta, Y, ctx);
    detail::translating_host_memory_errors(
        [&] { derived().apply_unchecked(op, X, Y, alpha, beta, ctx); },
        [&] {
          return detail::concat(detail::name_of(derived()), " (", derived().rows(), "x",
                                derived().cols(), ") as ", to_string(op), " on a batch of ", X.cols,
                                ": host memory could not provide its temporaries");
        });
  }

  // The dense matrix this operator represents (applies it to the identity).
  template <class D = Derived>
  HostMatrix<typename D::Scalar> to_dense() const {
    using T = typename D::Scalar;
    require<ShapeError>(detail::acts_per_signal(derived()), detail::name_of(derived()),
                        ": to_dense() needs an operator that acts on each signal separately;",
                        " this one mixes the signals of a batch (a Strassen-Tile operator with",
                        " inexact encoders), so it has no dense matrix");
    // It allocates the identity (cols x cols) and the result (rows x cols): their sizes are
    // checked before Eigen sees them (Eigen would throw std::bad_alloc).
    const auto host_matrix = [&](const char* which, Index rows, Index cols) {
      const std::string what =
          detail::concat(detail::name_of(derived()), " (", derived().rows(), "x", derived().cols(),
                         ") to_dense(): its ", rows, "x", cols, " ", which);
      return detail::allocating_host(what, detail::checked_element_count(what.c_str(), rows, cols),
                                     "elements", sizeof(T),
                                     [&] { return HostMatrix<T>(rows, cols); });
    };
    HostMatrix<T> eye = host_matrix("identity", derived().cols(), derived().cols());
    eye.setIdentity();
    HostMatrix<T> out = host_matrix("result", derived().rows(), derived().cols());
    apply(Op::NoTrans, view(eye), view(out));
    return out;
  }

  // A^T and A^H as views (no values move). Leaves and nodes may specialise through the
  // transpose_of/adjoint_of overloads (see algebra.hpp).
  template <class D = Derived>
  auto transpose() const {
    return transpose_of(static_cast<const D&>(*this));
  }
  template <class D = Derived>
  auto adjoint() const {
    return adjoint_of(static_cast<const D&>(*this));
  }
};

template <class E>
concept Operator = std::is_base_of_v<OperatorBase<E>, E>;

template <class A, class B>
concept SameScalar = std::is_same_v<typename A::Scalar, typename B::Scalar>;

// apply_reduced_precision (float operators on half or bfloat16 signals) with a non-const X,
// such as a DeviceMatrix's view(): each family's overload takes ConstView<Storage>, which a
// MatrixView<half> converts to only once Storage is known, so deduction alone finds none.
template <ReducedPrecision Storage, Operator A>
void apply_reduced_precision(const A& a, Op op, MatrixView<Storage> X, MatrixView<Storage> Y,
                             float alpha = 1, float beta = 0, Context& ctx = default_context()) {
  apply_reduced_precision<Storage>(a, op, ConstView<Storage>(X), Y, alpha, beta, ctx);
}

}  // namespace strop
