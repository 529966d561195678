#pragma once
// Solving with a Kronecker product through its factors (issue #8):
//   (F_1 ⊗ ... ⊗ F_n)^{-1} = F_1^{-1} ⊗ ... ⊗ F_n^{-1},
// so a system of size prod n_f costs one factorization of each small factor (LU with partial
// pivoting, or Cholesky for Hermitian positive definite factors) and then one Kron-matmul
// per right-hand-side batch: on the GPU the fast engine of operators/kron/, on the host the
// sliced multiply. The factor inverses are formed from the factorizations once, when the
// solver is made, in double precision (rounded once to T; an Identity factor stays itself); the
// forward error is that of the factor solves, about cond(F_1) ... cond(F_n) times the unit roundoff
// of T.
#include "strop/expr/kron.hpp"

namespace strop {

enum class KronSolveMethod {
  LU,        // partial pivoting, any invertible factor
  Cholesky,  // Hermitian positive definite factors (checked)
};

template <class T>
class KronSolver {
 public:
  // Factorizes every factor of A. Throws ShapeError for a non-square factor, NumericalError
  // for a factor with NaN/Inf, one that is singular to working precision (LU), or one that
  // is not Hermitian positive definite (Cholesky), and when the whole product is singular
  // to working precision (1-norm reciprocal condition, the product of the factors', <= eps).
  explicit KronSolver(const Kron<T>& A, KronSolveMethod method = KronSolveMethod::LU);

  Index size() const { return inverse_.rows(); }

  // X = op(A)^{-1} B for a batch of right-hand sides (op(A)^{-1} = op(A^{-1})); B and X are
  // both host or both device views, of size() rows.
  void solve(Op op, ConstView<T> B, MatrixView<T> X, Context& ctx = default_context()) const;
  void solve(ConstView<T> B, MatrixView<T> X, Context& ctx = default_context()) const {
    solve(Op::NoTrans, B, X, ctx);
  }

  // A^{-1} as an operator (Kron of the dense factor inverses), for use in expressions.
  const Kron<T>& inverse() const { return inverse_; }

  // The smallest reciprocal condition number estimate among the factors (1-norm).
  double min_factor_rcond() const { return min_rcond_; }

 private:
  // Declared (so initialised) before inverse_, whose initialiser records the minimum here.
  double min_rcond_ = 1;
  Kron<T> inverse_;
};

extern template class KronSolver<float>;
extern template class KronSolver<double>;
extern template class KronSolver<std::complex<float>>;
extern template class KronSolver<std::complex<double>>;

}  // namespace strop
