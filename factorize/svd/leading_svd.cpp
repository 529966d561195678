// Leading singular triples in three steps:
//   1. the leading eigenvectors of the smaller Gram matrix: Householder tridiagonalization,
//      then only the wanted eigenvalues (bisection on Sturm counts) and their eigenvectors
//      (inverse iteration on the tridiagonal), never the whole eigendecomposition;
//   2. V0, an estimate of the leading right singular subspace (n x rank) lying in A's row
//      space, and Q = orth(A V0);
//   3. Rayleigh-Ritz: the SVD of the small Q^H A gives the triples, U = Q Ub.
// The Gram squares the condition number, so step 1 alone would lose half the digits of the
// small singular directions; step 3 works on A itself, so the result is accurate to rounding
// (the projection error is second order in the subspace error of step 1, and for an exactly
// low-rank block Q spans its column space exactly) for every direction that the Gram
// resolves. Directions below the Gram's rounding are not resolved at all: the certificate at
// the end sends such blocks to the full SVD.
#include "factorize/svd/leading_svd.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "factorize/svd/block_svd.hpp"

namespace strop::detail {
namespace {

template <class T>
using DenseMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class Real>
using RealVector = Eigen::Matrix<Real, Eigen::Dynamic, 1>;

// Eigenvalues are bisected to rounding: the certificate in leading_svd compares their sum
// with the captured energy at the level of the Gram's own rounding.
template <class Real>
Real bisection_tolerance() {
  return 4 * std::numeric_limits<Real>::epsilon();
}

// A real symmetric tridiagonal matrix: diagonal a (n), off-diagonal b (n - 1).
template <class Real>
struct Tridiagonal {
  RealVector<Real> a, b;
  Real norm;  // max row sum, a bound on |eigenvalues|
  Real tiny;  // smallest pivot allowed: a zero pivot becomes this (LAPACK's pivmin idea)

  Index size() const { return a.size(); }

  // Eigenvalues below x (Sturm sequence: negative pivots of T - x I).
  Index count_below(Real x) const {
    Index count = 0;
    Real pivot = 1;
    for (Index i = 0; i < size(); ++i) {
      pivot = a(i) - x - (i > 0 ? b(i - 1) * b(i - 1) / pivot : Real(0));
      if (std::abs(pivot) < tiny) pivot = -tiny;
      if (pivot < 0) ++count;
    }
    return count;
  }

  // The eigenvalue with ascending index j, by bisection.
  Real eigenvalue(Index j) const {
    Real lo = -norm - tiny, hi = norm + tiny;
    const Real tolerance = norm * bisection_tolerance<Real>() + tiny;
    for (int it = 0; it < 200 && hi - lo > tolerance; ++it) {
      const Real mid = (lo + hi) / 2;
      if (count_below(mid) > j) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    return (lo + hi) / 2;
  }

  // y <- (T - shift I)^{-1} y by Gaussian elimination with partial pivoting (LAPACK's
  // gttrf/gttrs). Near an eigenvalue the last pivot is tiny and y grows along its
  // eigenvector: one step of inverse iteration.
  void shifted_solve(Real shift, RealVector<Real>& y) const {
    const Index n = size();
    RealVector<Real> d = a.array() - shift;
    RealVector<Real> lower = b, upper = b,
                     upper2 = RealVector<Real>::Zero(std::max<Index>(n - 2, 0));
    std::vector<bool> swapped(static_cast<std::size_t>(std::max<Index>(n - 1, 0)), false);
    auto guard = [&](Real& v) {
      if (std::abs(v) < tiny) v = v < 0 ? -tiny : tiny;
    };
    for (Index i = 0; i + 1 < n; ++i) {
      if (std::abs(d(i)) >= std::abs(lower(i))) {
        guard(d(i));
        const Real factor = lower(i) / d(i);
        lower(i) = factor;
        d(i + 1) -= factor * upper(i);
      } else {
        swapped[static_cast<std::size_t>(i)] = true;
        const Real factor = d(i) / lower(i);
        d(i) = lower(i);
        lower(i) = factor;
        const Real next = upper(i);
        upper(i) = d(i + 1);
        d(i + 1) = next - factor * d(i + 1);
        if (i + 2 < n) {
          upper2(i) = upper(i + 1);
          upper(i + 1) = -factor * upper(i + 1);
        }
      }
    }
    guard(d(n - 1));
    for (Index i = 0; i + 1 < n; ++i) {
      if (swapped[static_cast<std::size_t>(i)]) {
        const Real top = y(i);
        y(i) = y(i + 1);
        y(i + 1) = top - lower(i) * y(i);
      } else {
        y(i + 1) -= lower(i) * y(i);
      }
    }
    for (Index i = n - 1; i >= 0; --i) {
      Real v = y(i);
      if (i + 1 < n) v -= upper(i) * y(i + 1);
      if (i + 2 < n) v -= upper2(i) * y(i + 2);
      y(i) = v / d(i);
    }
  }
};

// A start vector for inverse iteration: a different pseudo-random one per eigenvalue, so that
// each has components along every eigenvector of a cluster of equal eigenvalues (structured
// blocks such as a 2-D Laplacian's have clusters of 4, spread over decoupled pieces of T).
template <class Real>
RealVector<Real> start_vector(Index n, Index k) {
  RealVector<Real> v(n);
  std::uint64_t x = 0x9E3779B97F4A7C15ull * std::uint64_t(k + 1);
  for (Index i = 0; i < n; ++i) {
    x ^= x >> 33;  // an xorshift-multiply mix: cheap, deterministic, well spread
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 29;
    v(i) = Real(double(x >> 11) * 0x1.0p-53 - 0.5);
  }
  return v;
}

// The `count` largest eigenvalues of T (descending) and orthonormal eigenvectors (columns).
template <class Real>
std::pair<RealVector<Real>, DenseMatrix<Real>> leading_eigenpairs(const Tridiagonal<Real>& t,
                                                                  Index count) {
  const Index n = t.size();
  RealVector<Real> lambda(count);
  DenseMatrix<Real> y(n, count);
  for (Index k = 0; k < count; ++k) {
    lambda(k) = t.eigenvalue(n - 1 - k);
    RealVector<Real> v = start_vector<Real>(n, k);
    // Each step multiplies the error by about |shift error| / gap; orthogonalising against
    // the vectors already found separates (nearly) equal eigenvalues.
    for (int step = 0; step < 4; ++step) {
      t.shifted_solve(lambda(k), v);
      for (int pass = 0; pass < 2; ++pass)
        v -= y.leftCols(k) * (y.leftCols(k).transpose() * v);
      const Real norm = v.norm();
      v = norm > 0 && std::isfinite(norm) ? RealVector<Real>(v / norm)
                                          : start_vector<Real>(n, k + n);
    }
    y.col(k) = v;
  }
  return {lambda, y};
}

// The `count` largest eigenvalues of the Hermitian matrix g and an orthonormal basis (columns)
// of their eigenvectors.
template <class T>
std::pair<RealVector<RealOf<T>>, DenseMatrix<T>> leading_gram_eigenpairs(const DenseMatrix<T>& g,
                                                                         Index count) {
  using Real = RealOf<T>;
  Eigen::Tridiagonalization<DenseMatrix<T>> tri(g);
  Tridiagonal<Real> t{tri.diagonal(), tri.subDiagonal(), 0, 0};
  t.norm = t.a.cwiseAbs().maxCoeff();
  if (t.size() > 1) {
    RealVector<Real> rows = t.a.cwiseAbs();
    rows.head(t.size() - 1) += t.b.cwiseAbs();
    rows.tail(t.size() - 1) += t.b.cwiseAbs();
    t.norm = rows.maxCoeff();
  }
  t.tiny =
      std::max(t.norm * std::numeric_limits<Real>::epsilon(), std::numeric_limits<Real>::min());
  auto [lambda, y] = leading_eigenpairs(t, count);
  return {lambda, tri.matrixQ() * y.template cast<T>()};
}

}  // namespace

template <class T>
std::optional<double> leading_svd(const T* block, Index rows, Index cols, Index rank, T* u,
                                  RealOf<T>* s, T* vh) {
  using Matrix = DenseMatrix<T>;
  using Real = RealOf<T>;
  const Eigen::Map<const Matrix> A(block, rows, cols);
  // V0 in A's row space, so that A V0 spans exactly A's column space when rank(A) <= rank;
  // lambda: the Gram's leading eigenvalues, the squares of the singular values wanted.
  Matrix gram = Matrix::Zero(std::min(rows, cols), std::min(rows, cols));
  if (rows >= cols) {
    gram.template selfadjointView<Eigen::Lower>().rankUpdate(A.adjoint());
  } else {
    gram.template selfadjointView<Eigen::Lower>().rankUpdate(A);
  }
  gram.template triangularView<Eigen::StrictlyUpper>() = gram.adjoint();
  auto [lambda, basis] = leading_gram_eigenpairs<T>(gram, rank);
  const Matrix v0 = rows >= cols ? basis : Matrix(A.adjoint() * basis);
  const Eigen::HouseholderQR<Matrix> qr(A * v0);
  const Matrix q = qr.householderQ() * Matrix::Identity(rows, rank);
  const Matrix small = q.adjoint() * A;  // rank x cols
  // Its full SVD by the block SVD's own path (rank x rank U, so it never comes back here):
  // this file then instantiates none of Eigen's SVDs, which cost CI minutes per scalar type.
  Matrix ub(rank, rank), vbh(rank, cols);
  RealVector<Real> sb(rank);
  truncated_svd_cpu(small.data(), rank, cols, rank, ub.data(), sb.data(), vbh.data());
  // Certificate; the caller takes the full SVD when it fails. The Gram holds A's squares to
  // within about tau = (rows + cols) eps ||A||^2, so its eigenvectors resolve a direction only
  // when sigma^2 is well above tau (sigma = 5e-8 ||A|| next to 1e-9 noise was taken for noise,
  // 6x the optimal error). A resolved subspace is off by an angle of about tau / sigma^2 and
  // loses about tau^2 / sigma^2 of energy: accepted when that is a thousandth of the dropped
  // energy, or rounding of A. And the captured energy Σ s_i^2 falls short of the optimum
  // Σ lambda_i (Ritz values interlace) by no more than the eigenvalues' own error, or a
  // direction was missed.
  const double energy = A.squaredNorm();
  const double eps = std::numeric_limits<Real>::epsilon();
  const double tau = double(rows + cols) * eps * energy;
  const double rounding = tau * double(rows + cols) * eps;  // ((rows + cols) eps ||A||)^2
  // Measured, not ||A||^2 - Σ s^2, which would cancel to half the digits for good fits.
  const double dropped = (A - q * small).squaredNorm();
  const double smallest = double(sb(rank - 1)) * double(sb(rank - 1));
  const double shortfall = double(lambda.sum()) - double(sb.squaredNorm());
  const bool resolved = smallest >= 1e3 * tau &&
                        tau * tau <= smallest * (1e-3 * dropped + rounding) &&
                        shortfall <= 1e-3 * dropped + double(rank) * tau;
  // A block captured to rounding is optimal whatever its spectrum (exactly low-rank blocks,
  // also of lower rank than asked for).
  if (!resolved && !(dropped <= rounding)) return std::nullopt;
  Eigen::Map<Matrix>(u, rows, rank) = q * ub;
  Eigen::Map<RealVector<Real>>(s, rank) = sb;
  Eigen::Map<Matrix>(vh, rank, cols) = vbh;
  return dropped;
}

// Double precision only: float blocks are widened by truncated_svd_cpu.
template std::optional<double> leading_svd(const double*, Index, Index, Index, double*, double*,
                                           double*);
template std::optional<double> leading_svd(const std::complex<double>*, Index, Index, Index,
                                           std::complex<double>*, double*, std::complex<double>*);

}  // namespace strop::detail
