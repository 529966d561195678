#pragma once
// Product<L, R>: the composition L * R, applied right to left through one temporary.
#include <vector>
#include "strop/core/buffer.hpp"

#include "strop/expr/operator_base.hpp"

namespace strop {

namespace detail {
// One operand of a product for the hook below: its type name ("any" for an AnyOperator,
// whose node is then looked at) and its address.
struct ProductOperand {
  const char* type;
  const void* object;
};
template <class E>
ProductOperand product_operand(const E& e) {
  return {E::type_name, &e};
}
// Products that one kernel applies whole, with no temporary between the factors: today the
// chain dft() builds times its digit reversal (the Stockham FFT, KSChain's FourierForm).
// Applies L R and returns true, or returns false having touched nothing. Defined in
// operators/transforms/fourier_product.cpp for each scalar type.
template <class T>
bool apply_product_whole(ProductOperand lhs, ProductOperand rhs, Op op, ConstView<T> X,
                         MatrixView<T> Y, T alpha, T beta, Context& ctx);
}  // namespace detail

template <class L, class R>
class Product : public OperatorBase<Product<L, R>> {
  static_assert(std::is_same_v<typename L::Scalar, typename R::Scalar>,
                "operators in one expression share a scalar type");

 public:
  using Scalar = typename L::Scalar;
  static constexpr const char* type_name = "product";

  Product(L lhs, R rhs) : lhs_(std::move(lhs)), rhs_(std::move(rhs)) {
    require<ShapeError>(lhs_.cols() == rhs_.rows(), "product: left operand is ", lhs_.rows(), "x",
                        lhs_.cols(), ", right operand is ", rhs_.rows(), "x", rhs_.cols());
  }

  Index rows() const { return lhs_.rows(); }
  Index cols() const { return rhs_.cols(); }
  const L& lhs() const { return lhs_; }
  const R& rhs() const { return rhs_; }

  void apply_unchecked(Op op, ConstView<Scalar> X, MatrixView<Scalar> Y, Scalar alpha, Scalar beta,
                       Context& ctx) const {
    // An empty inner dimension: Y = beta Y (the children's apply_unchecked expect extents).
    if (rhs_.rows() == 0) return detail::scale(beta, Y, ctx);
    if (detail::apply_product_whole(detail::product_operand(lhs_), detail::product_operand(rhs_),
                                    op, X, Y, alpha, beta, ctx))
      return;
    // (LR) X = L (R X) and (LR)^T X = R^T (L^T X): the inner dimension is shared.
    TempMatrix<Scalar> inner(rhs_.rows(), X.cols, layout_of(Y), X.space, ctx);
    if (op == Op::NoTrans) {
      rhs_.apply_unchecked(op, X, inner.view, Scalar(1), Scalar(0), ctx);
      lhs_.apply_unchecked(op, inner.view, Y, alpha, beta, ctx);
    } else {
      lhs_.apply_unchecked(op, X, inner.view, Scalar(1), Scalar(0), ctx);
      rhs_.apply_unchecked(op, inner.view, Y, alpha, beta, ctx);
    }
  }

  double flops(Index batch) const { return lhs_.flops(batch) + rhs_.flops(batch); }
  double transposed_flops(Index batch) const {
    return detail::transposed_flops(lhs_, batch) + detail::transposed_flops(rhs_, batch);
  }
  Index parameter_count() const { return lhs_.parameter_count() + rhs_.parameter_count(); }

  // The run-time form (children type-erased) and the children, for AnyOperator and I/O.
  auto to_any_form() const { return Product<AnyOperator<Scalar>, AnyOperator<Scalar>>(lhs_, rhs_); }
  std::vector<AnyOperator<Scalar>> children() const { return {lhs_, rhs_}; }

 private:
  L lhs_;
  R rhs_;
};

}  // namespace strop
