#pragma once
// Transposed<E, Conjugate>: E^T (Conjugate = false) or E^H (true), a view: no values move.
#include <vector>
#include "strop/core/buffer.hpp"

#include "strop/expr/operator_base.hpp"

namespace strop {

template <class E, bool Conjugate>
class Transposed : public OperatorBase<Transposed<E, Conjugate>> {
 public:
  using Scalar = typename E::Scalar;
  static constexpr const char* type_name = Conjugate ? "adjoint" : "transpose";

  explicit Transposed(E inner) : inner_(std::move(inner)) {}

  Index rows() const { return inner_.cols(); }
  Index cols() const { return inner_.rows(); }
  const E& inner() const { return inner_; }

  void apply_unchecked(Op op, ConstView<Scalar> X, MatrixView<Scalar> Y, Scalar alpha, Scalar beta,
                       Context& ctx) const {
    constexpr Op own = Conjugate && is_complex_v<Scalar> ? Op::Adjoint : Op::Trans;
    if (op == Op::NoTrans) return inner_.apply_unchecked(own, X, Y, alpha, beta, ctx);
    if (op == own || !is_complex_v<Scalar>) {
      return inner_.apply_unchecked(Op::NoTrans, X, Y, alpha, beta, ctx);
    }
    // (E^T)^H = (E^H)^T = conj(E): evaluate conj(E) X as conj(E conj(X)).
    TempMatrix<Scalar> conj_x(X.rows, X.cols, layout_of(X), X.space, ctx);
    detail::axpby(Scalar(1), X, Scalar(0), conj_x.view, true, ctx);
    TempMatrix<Scalar> product(Y.rows, Y.cols, layout_of(Y), Y.space, ctx);
    inner_.apply_unchecked(Op::NoTrans, conj_x.view, product.view, Scalar(1), Scalar(0), ctx);
    detail::axpby(alpha, ConstView<Scalar>(product.view), beta, Y, true, ctx);
  }

  double flops(Index batch) const { return detail::transposed_flops(inner_, batch); }
  double transposed_flops(Index batch) const { return inner_.flops(batch); }
  Index parameter_count() const { return inner_.parameter_count(); }

  auto to_any_form() const { return Transposed<AnyOperator<Scalar>, Conjugate>(inner_); }
  std::vector<AnyOperator<Scalar>> children() const { return {inner_}; }

 private:
  E inner_;
};

}  // namespace strop
