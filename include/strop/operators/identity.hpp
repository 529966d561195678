#pragma once
// Identity<T>: I_n. Works on host and device (it is an axpby).
#include "strop/expr/operator_base.hpp"

namespace strop {

template <class T>
class Identity : public OperatorBase<Identity<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "identity";

  explicit Identity(Index n) : n_(n) { require<ShapeError>(n >= 0, "identity: negative size ", n); }
  Index rows() const { return n_; }
  Index cols() const { return n_; }
  void apply_unchecked(Op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const {
    detail::axpby(alpha, X, beta, Y, false, ctx);
  }
  double flops(Index) const { return 0; }
  Index parameter_count() const { return 0; }

 private:
  Index n_;
};

}  // namespace strop
