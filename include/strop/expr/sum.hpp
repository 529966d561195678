#pragma once
// Sum<L, R>: L + R, evaluated with beta = 1 accumulation instead of a temporary.
#include <vector>

#include "strop/expr/operator_base.hpp"

namespace strop {

template <class L, class R>
class Sum : public OperatorBase<Sum<L, R>> {
  static_assert(std::is_same_v<typename L::Scalar, typename R::Scalar>,
                "operators in one expression share a scalar type");

 public:
  using Scalar = typename L::Scalar;
  static constexpr const char* type_name = "sum";

  Sum(L lhs, R rhs) : lhs_(std::move(lhs)), rhs_(std::move(rhs)) {
    require<ShapeError>(lhs_.rows() == rhs_.rows() && lhs_.cols() == rhs_.cols(),
                        "sum: operands are ", lhs_.rows(), "x", lhs_.cols(), " and ", rhs_.rows(),
                        "x", rhs_.cols());
  }

  Index rows() const { return lhs_.rows(); }
  Index cols() const { return lhs_.cols(); }
  const L& lhs() const { return lhs_; }
  const R& rhs() const { return rhs_; }

  void apply_unchecked(Op op, ConstView<Scalar> X, MatrixView<Scalar> Y, Scalar alpha, Scalar beta,
                       Context& ctx) const {
    lhs_.apply_unchecked(op, X, Y, alpha, beta, ctx);
    rhs_.apply_unchecked(op, X, Y, alpha, Scalar(1), ctx);
  }

  // Both parts, plus one addition per output (two real flops for complex values).
  double flops(Index batch) const {
    return lhs_.flops(batch) + rhs_.flops(batch) + detail::addition_flops<Scalar>(rows(), batch);
  }
  double transposed_flops(Index batch) const {
    return detail::transposed_flops(lhs_, batch) + detail::transposed_flops(rhs_, batch) +
           detail::addition_flops<Scalar>(cols(), batch);
  }
  Index parameter_count() const { return lhs_.parameter_count() + rhs_.parameter_count(); }

  auto to_any_form() const { return Sum<AnyOperator<Scalar>, AnyOperator<Scalar>>(lhs_, rhs_); }
  std::vector<AnyOperator<Scalar>> children() const { return {lhs_, rhs_}; }

 private:
  L lhs_;
  R rhs_;
};

}  // namespace strop
