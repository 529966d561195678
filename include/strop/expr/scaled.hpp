#pragma once
// Scaled<E>: s * E. Nested scalings fold into one factor when the expression is built.
#include <vector>

#include "strop/expr/operator_base.hpp"

namespace strop {

template <class E>
class Scaled : public OperatorBase<Scaled<E>> {
 public:
  using Scalar = typename E::Scalar;
  static constexpr const char* type_name = "scaled";

  Scaled(Scalar factor, E inner) : factor_(factor), inner_(std::move(inner)) {
    require<NumericalError>(is_finite(factor), "scaled: the scalar factor must be finite");
  }

  Index rows() const { return inner_.rows(); }
  Index cols() const { return inner_.cols(); }
  Scalar factor() const { return factor_; }
  const E& inner() const { return inner_; }

  void apply_unchecked(Op op, ConstView<Scalar> X, MatrixView<Scalar> Y, Scalar alpha, Scalar beta,
                       Context& ctx) const {
    const Scalar s = op == Op::Adjoint ? strop::conj(factor_) : factor_;
    const Scalar scaled_alpha = alpha * s;
    if (is_finite(scaled_alpha)) return inner_.apply_unchecked(op, X, Y, scaled_alpha, beta, ctx);
    // Both are finite (checked), but their product overflows, which would turn every output
    // into Inf or NaN, even where alpha s A X is finite (small X). Then |alpha| > 1 and |s| > 1,
    // so T = s A X is at most the result in size (it overflows only where the result does),
    // and Y = alpha T + beta Y.
    TempMatrix<Scalar> t(Y.rows, Y.cols, layout_of(Y), Y.space, ctx);
    inner_.apply_unchecked(op, X, t.view, s, Scalar(0), ctx);
    detail::axpby(alpha, ConstView<Scalar>(t.view), beta, Y, false, ctx);
  }

  double flops(Index batch) const { return inner_.flops(batch); }
  double transposed_flops(Index batch) const { return detail::transposed_flops(inner_, batch); }
  Index parameter_count() const { return inner_.parameter_count() + 1; }

  auto to_any_form() const { return Scaled<AnyOperator<Scalar>>(factor_, inner_); }
  std::vector<AnyOperator<Scalar>> children() const { return {inner_}; }

 private:
  Scalar factor_;
  E inner_;
};

}  // namespace strop
