#pragma once
// Kron<T>: F_1 ⊗ F_2 ⊗ ... ⊗ F_n of any operators, never materialised.
//
// Applied with FastKron's sliced multiply (NOTES.md, "sliced-multiply step"): with
// G_f = op(F_f) of shape Q_f x P_f, step f = n..1 maps an intermediate Z of K rows to
//   Z'[q*(K/P_f) + s, :] = sum_p G_f[q, p] Z[s*P_f + p, :]
// i.e. for every slice s, rows {s, s+K/P, ...} of Z' = G_f * rows [s*P, s*P+P) of Z.
// The permuted store replaces the transposes of the shuffle algorithm; after n steps the
// result is in natural order. Each slice product is the factor's own application, so a
// factor can be any operator (a KS factor, a product, another Kron, ...).
// On the device, a product of Dense/Identity factors (also behind transpose/adjoint nodes)
// goes to the Kron-matmul engine instead (strop/operators/kron_matmul.hpp: fused CUDA
// kernels, any layout); the algorithm follows kron_algorithm().
#include <vector>

#include "strop/expr/any_operator.hpp"

namespace strop {

template <class T>
class Kron : public OperatorBase<Kron<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "kron";

  explicit Kron(std::vector<AnyOperator<T>> factors);

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  const std::vector<AnyOperator<T>>& factors() const { return factors_; }
  std::vector<AnyOperator<T>> children() const { return factors_; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const;

 private:
  std::vector<AnyOperator<T>> factors_;
  Index rows_ = 1;
  Index cols_ = 1;
};

template <class T>
Kron<T> transpose_of(const Kron<T>& k);
template <class T>
Kron<T> adjoint_of(const Kron<T>& k);

// kron(A, B, C, ...): at least one operator, all of one scalar type.
template <Operator E, Operator... Es>
requires(std::is_same_v<typename E::Scalar, typename Es::Scalar>&&...)
    Kron<typename E::Scalar> kron(const E& first, const Es&... rest) {
  using T = typename E::Scalar;
  return Kron<T>(std::vector<AnyOperator<T>>{AnyOperator<T>(first), AnyOperator<T>(rest)...});
}

extern template class Kron<float>;
extern template class Kron<double>;
extern template class Kron<std::complex<float>>;
extern template class Kron<std::complex<double>>;

}  // namespace strop
