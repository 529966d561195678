#pragma once
// The two-factor fixed-support problem (internal): W ≈ X Y, X on pi1, Y on pi2, solved
// exactly by one truncated SVD per independent block (papers/NOTES.md).
#include "strop/factorize/report.hpp"
#include "strop/operators/ks_factor.hpp"

namespace strop::detail {

// The matrix being split: a dense matrix, or a KS factor produced by an earlier split (its
// zeros are never stored, and every block the next split reads lies inside its support).
template <class T>
struct SplitSource {
  const HostMatrix<T>* dense = nullptr;
  const KSFactor<T>* factor = nullptr;

  Index rows() const { return dense ? dense->rows() : factor->rows(); }
  Index cols() const { return dense ? dense->cols() : factor->cols(); }
  // Squared Frobenius norm.
  double squared_norm() const;
  // out(k, l) = W(r0 + k * rs, c0 + l * cs), k < rows, l < cols, column-major.
  void gather(Index r0, Index rs, Index rows, Index c0, Index cs, Index cols, T* out) const;
};

template <class T>
struct TwoFactorSolution {
  KSFactor<T> left;
  KSFactor<T> right;
  // ||W - left * right||_F^2, the optimum of the problem.
  double squared_error = 0;
};

// PatternError unless pi1 and pi2 are chainable and W is pi1.rows() x pi2.cols().
template <class T>
TwoFactorSolution<T> solve_two_factor(const SplitSource<T>& W, const KSPattern& pi1,
                                      const KSPattern& pi2, bool orthonormal, Device device,
                                      Context& ctx);

}  // namespace strop::detail
