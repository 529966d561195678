#pragma once
// Kron<T>: F_1 ⊗ F_2 ⊗ ... ⊗ F_n of any operators, never materialised.
//
// Applied with FastKron's sliced multiply (NOTES.md, "sliced-multiply step"): with
// G_f = op(F_f) of shape Q_f x P_f, step f = n..1 maps an intermediate Z of K rows to
//   Z'[q*(K/P_f) + s, :] = sum_p G_f[q, p] Z[s*P_f + p, :]
// i.e. for every slice s, rows {s, s+K/P, ...} of Z' = G_f * rows [s*P, s*P+P) of Z.
// After n steps the result is in natural order. On the device, a product of Dense/Identity
// factors (also behind transpose/adjoint nodes) goes to the Kron-matmul engine
// (strop/operators/kron_matmul.hpp: fused CUDA kernels, cuBLAS GEMM passes, any layout);
// the algorithm follows kron_algorithm(). On the host, and for any other factors on the
// device (a KS chain, a product, another Kron, ...), the product goes factor by factor, each
// applied once by its own path to all S = K/P_f slices of all signals (one application to
// S*B columns), in the order of least flops (detail::kron_cheapest_order: with rectangular
// factors the intermediate's size, and so the cost, depends on it), with a transpose of
// each signal between steps.
#include <vector>

#include "strop/core/reduced_precision.hpp"
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
  double transposed_flops(Index batch) const;
  Index parameter_count() const;

 private:
  // Any factors: each applied once to the mode unfolding of the intermediate, in the
  // cheapest order, with a permutation between steps (src/expr/kron.cpp).
  void apply_factor_by_factor(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                              Context& ctx) const;

  std::vector<AnyOperator<T>> factors_;
  Index rows_ = 1;
  Index cols_ = 1;
};

namespace detail {
// One factor as the factor-by-factor product sees it (op applied): each slice of `in` values
// becomes `out` values (both at least 1) for `flops` (the factor's flops on one signal).
struct KronFactorCost {
  Index in = 1;
  Index out = 1;
  double flops = 0;
};
// The cost model: applying factor f to an intermediate of K values a signal costs
// flops_f * K / in_f and leaves K * out_f / in_f values. The cost, a signal, of applying the
// factors in `order` to prod in_f values.
double kron_order_cost(const std::vector<KronFactorCost>& factors,
                       const std::vector<std::size_t>& order);
// The order (indices into `factors`) of least kron_order_cost.
std::vector<std::size_t> kron_cheapest_order(const std::vector<KronFactorCost>& factors);
}  // namespace detail

template <class T>
Kron<T> transpose_of(const Kron<T>& k);
template <class T>
Kron<T> adjoint_of(const Kron<T>& k);

// kron(A, B, C, ...): at least one operator, all of one scalar type. With several factors,
// each must act on every signal separately (ShapeError for a Strassen-Tile operator with
// inexact encoders: it mixes the signals of a batch, so it has no Kronecker product).
template <Operator E, Operator... Es>
requires(std::is_same_v<typename E::Scalar, typename Es::Scalar>&&...)
    Kron<typename E::Scalar> kron(const E& first, const Es&... rest) {
  using T = typename E::Scalar;
  return Kron<T>(std::vector<AnyOperator<T>>{AnyOperator<T>(first), AnyOperator<T>(rest)...});
}

// Mixed precision: a float Kron applied to half or bfloat16 signals. On the GPU a product of
// dense/identity factors runs the Kron-matmul engine's 16-bit path (one tensor-core GEMM per
// factor, fp32 accumulation, factors and intermediates rounded to 16 bits); other factors
// go through float copies of the signals. On the host, through float.
template <ReducedPrecision Storage>
void apply_reduced_precision(const Kron<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class Kron<float>;
extern template class Kron<double>;
extern template class Kron<std::complex<float>>;
extern template class Kron<std::complex<double>>;

}  // namespace strop
