#include "strop/expr/kron_solve.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <limits>
#include <type_traits>

#include "strop/operators/dense.hpp"
#include "strop/operators/identity.hpp"

namespace strop {
namespace {

// Factors are inverted in double precision (complex<double> for complex scalars) and rounded
// once to T: single-precision factors get an inverse accurate to their own precision, and
// only two instantiations of Eigen's decompositions are compiled.
template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

template <class W>
struct FactorInverse {
  HostMatrix<W> inverse;
  double rcond = 1;
};

// `eps`: the working precision of the solver's scalar type, for the singularity check.
template <class W>
FactorInverse<W> invert_factor(const HostMatrix<W>& F, std::size_t index, KronSolveMethod method,
                               double eps) {
  require<ShapeError>(F.rows() == F.cols(), "KronSolver: factor ", index, " is ", F.rows(), "x",
                      F.cols(), "; solving needs square factors");
  require<NumericalError>(F.allFinite(), "KronSolver: factor ", index,
                          " has NaN or infinite entries");
  const Index n = F.rows();
  // An empty factor makes an empty system, solved by doing nothing; Eigen's estimates are no
  // use on it (LU's rcond is inf, and the Cholesky check's maxCoeff of nothing is undefined).
  if (n == 0) return {HostMatrix<W>(0, 0), 1.0};
  const HostMatrix<W> identity = HostMatrix<W>::Identity(n, n);
  if (method == KronSolveMethod::Cholesky) {
    const double asym = double((F - F.adjoint()).cwiseAbs().maxCoeff());
    require<NumericalError>(asym <= 100 * eps * double(F.cwiseAbs().maxCoeff()),
                            "KronSolver: factor ", index,
                            " is not Hermitian (Cholesky needs Hermitian positive definite "
                            "factors; use KronSolveMethod::LU)");
    const Eigen::LLT<HostMatrix<W>> llt(F);
    require<NumericalError>(llt.info() == Eigen::Success, "KronSolver: factor ", index,
                            " is not positive definite (Cholesky failed; use "
                            "KronSolveMethod::LU)");
    const double rcond = double(llt.rcond());
    require<NumericalError>(rcond > eps, "KronSolver: factor ", index,
                            " is singular to working precision (reciprocal condition ", rcond, ")");
    return {llt.solve(identity), rcond};
  }
  const Eigen::PartialPivLU<HostMatrix<W>> lu(F);
  const double rcond = double(lu.rcond());
  require<NumericalError>(rcond > eps && std::isfinite(rcond), "KronSolver: factor ", index,
                          " is singular to working precision (reciprocal condition ", rcond, ")");
  return {lu.solve(identity), rcond};
}

template <class T>
std::vector<AnyOperator<T>> inverse_factors(const Kron<T>& A, KronSolveMethod method,
                                            double& min_rcond) {
  const double eps = double(std::numeric_limits<RealOf<T>>::epsilon());
  std::vector<AnyOperator<T>> inverses;
  // The 1-norm and its inverse's are multiplicative over a Kronecker product, so the
  // product of the factors' reciprocal conditions is the whole system's: factors that each
  // pass can still make a product singular to working precision.
  double product_rcond = 1;
  for (std::size_t f = 0; f < A.factors().size(); ++f) {
    // An identity is its own inverse, perfectly conditioned: no dense n x n copy to factor.
    if (A.factors()[f].template as<Identity<T>>() != nullptr) {
      inverses.push_back(A.factors()[f]);
      continue;
    }
    const HostMatrix<Wide<T>> F = A.factors()[f].to_dense().template cast<Wide<T>>();
    FactorInverse<Wide<T>> inv = invert_factor<Wide<T>>(F, f, method, eps);
    min_rcond = std::min(min_rcond, inv.rcond);
    product_rcond *= inv.rcond;
    inverses.emplace_back(Dense<T>(inv.inverse.template cast<T>()));
  }
  require<NumericalError>(product_rcond > eps, "KronSolver: the Kronecker product of ",
                          A.factors().size(), " factors is singular to working precision ",
                          "(reciprocal condition ", product_rcond,
                          ", the product of its factors'), though each factor is not");
  return inverses;
}

}  // namespace

template <class T>
KronSolver<T>::KronSolver(const Kron<T>& A, KronSolveMethod method)
    : inverse_(inverse_factors(A, method, min_rcond_)) {}

template <class T>
void KronSolver<T>::solve(Op op, ConstView<T> B, MatrixView<T> X, Context& ctx) const {
  require<ShapeError>(B.rows == size() && X.rows == size() && B.cols == X.cols,
                      "KronSolver: the system has ", size(), " unknowns; got B ", B.rows, "x",
                      B.cols, " and X ", X.rows, "x", X.cols);
  // The same checks apply() makes, so that a misuse names the solver, not its inverse "kron".
  detail::check_application("KronSolver", size(), size(), op, B, X, T(1), T(0));
  inverse_.apply(op, B, X, T(1), T(0), ctx);
}

template class KronSolver<float>;
template class KronSolver<double>;
template class KronSolver<std::complex<float>>;
template class KronSolver<std::complex<double>>;

}  // namespace strop
