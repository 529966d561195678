// The "optimal" factorizations against Eigen's SVD where rounding is the difficulty: spectra
// that decay below the rounding of a Gram matrix, randomized tolerances below float's
// rounding of ||A||^2, and inputs so large or small that their squares over- or underflow.
#include <Eigen/QR>
#include <cmath>
#include <limits>

#include "reference.hpp"
#include "reference_svd.hpp"
#include "strop/factorize/factorize.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// U diag(sigma) V^T with random orthogonal U (rows x k) and V (cols x k), k = sigma.size().
HostMatrix<double> with_spectrum(Index rows, Index cols, const Eigen::VectorXd& sigma) {
  const Index k = sigma.size();
  const HostMatrix<double> u =
      Eigen::HouseholderQR<HostMatrix<double>>(random_matrix<double>(rows, k)).householderQ() *
      HostMatrix<double>::Identity(rows, k);
  const HostMatrix<double> v =
      Eigen::HouseholderQR<HostMatrix<double>>(random_matrix<double>(cols, k)).householderQ() *
      HostMatrix<double>::Identity(cols, k);
  return u * sigma.asDiagonal() * v.transpose();
}

// sigma = [1, ..., 1, gap] (rank entries) followed by noise: the gap direction's square is
// near the rounding of a Gram matrix, below that of a float one.
Eigen::VectorXd gap_spectrum(Index size, Index rank, double gap, double noise) {
  Eigen::VectorXd sigma = Eigen::VectorXd::Constant(size, noise);
  sigma.head(rank).setOnes();
  sigma(rank - 1) = gap;
  return sigma;
}

// Relative error of the best rank-`rank` approximation of `block` (squared, unnormalized).
double optimal_tail(const HostMatrix<double>& block, Index rank) {
  const Eigen::VectorXd sigma = reference_singular_values(block);
  return sigma.tail(sigma.size() - rank).squaredNorm();
}

// 1 / (1 + 25 (x - y)^2) on a grid of [0, 1): a smooth kernel, singular values decaying
// geometrically.
HostMatrix<double> cauchy_kernel(Index n) {
  HostMatrix<double> k(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i) {
      const double x = double(i) / double(n), y = double(j) / double(n);
      k(i, j) = 1.0 / (1.0 + 25 * (x - y) * (x - y));
    }
  return k;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(factorize_accuracy)

BOOST_AUTO_TEST_CASE(gap_below_gram_rounding_is_found) {
  // sigma_4 = 5e-8 next to 1e-9 noise: its square is below the rounding of the 64 x 64
  // Gram, whose eigenvectors took a noise direction for it (5.9x the optimal error).
  // Every SVD-based factorization of one such block must reach the optimum.
  const Index n = 64, rank = 4;
  for (double gap : {1e-8, 5e-8, 1e-6}) {
    BOOST_TEST_CONTEXT("gap " << gap) {
      const HostMatrix<double> A = with_spectrum(n, n, gap_spectrum(n, rank, gap, 1e-9));
      const double optimum = std::sqrt(optimal_tail(A, rank)) / A.norm();
      const auto monarch = factorize_monarch(A, 1, 1, rank);
      BOOST_TEST(monarch.report.relative_error <= 1.001 * optimum);
      BOOST_TEST(monarch.report.lower_bound <= 1.001 * optimum);
      const auto ks = factorize_ks_chain(A, low_rank_patterns(n, n, rank));
      BOOST_TEST(ks.report.relative_error <= 1.001 * optimum);
      BOOST_TEST(ks.report.lower_bound <= 1.001 * optimum);
      // Nearest Kronecker sum: the rearrangement of A (8 x 8 factors) has A's spectrum.
      HostMatrix<double> K(n, n);
      for (Index j1 = 0; j1 < 8; ++j1)
        for (Index i1 = 0; i1 < 8; ++i1)
          for (Index j2 = 0; j2 < 8; ++j2)
            for (Index i2 = 0; i2 < 8; ++i2)
              K(i1 * 8 + i2, j1 * 8 + j2) = A(i1 + j1 * 8, i2 + j2 * 8);
      const auto kron = factorize_kron(K, 8, 8, {.terms = rank});
      BOOST_TEST(kron.report.relative_error <= 1.001 * optimum);
      BOOST_TEST(kron.report.lower_bound <= 1.001 * optimum);
    }
  }
}

BOOST_AUTO_TEST_CASE(float_blocks_of_a_smooth_kernel_are_projected_optimally) {
  // The blocks' singular values fall below float rounding within a few ranks: a Gram
  // formed in float lost them (16x the optimum at rank 8). The factors are float, so the
  // optimum (Eigen's SVD of the float matrix's blocks, in double) is reached up to float
  // rounding of the product.
  const Index n = 256, grid = 4, h = n / grid;
  const HostMatrix<float> A = cauchy_kernel(n).cast<float>();
  const HostMatrix<double> Ad = A.cast<double>();
  for (Index rank : {4, 6, 8}) {
    double tail = 0;
    for (Index k = 0; k < grid; ++k)
      for (Index l = 0; l < grid; ++l)
        tail += optimal_tail(Ad.block(k * h, l * h, h, h), rank);
    const double optimum = std::sqrt(tail) / Ad.norm();
    const auto f = factorize_monarch(A, grid, grid, rank);
    const double error =
        relative_error(HostMatrix<double>(f.monarch.to_dense().cast<double>()), Ad);
    BOOST_TEST_MESSAGE("rank " << rank << ": optimum " << optimum << ", got " << error);
    BOOST_TEST(error <= 1.01 * optimum + 1e-6, "rank " << rank);
    BOOST_TEST(std::abs(f.report.bound - optimum) <= 1e-3 * optimum, "rank " << rank);
  }
}

BOOST_AUTO_TEST_CASE(decaying_spectra_match_the_full_svd) {
  // Geometric decay sigma_i = 10^-i/2 through the Gram's rounding: Monarch's per-block
  // errors equal Eigen's optimum for every rank.
  const Index n = 96;
  Eigen::VectorXd sigma(n);
  for (Index i = 0; i < n; ++i)
    sigma(i) = std::pow(10.0, -0.5 * double(i));
  const HostMatrix<double> A = with_spectrum(n, n, sigma);
  for (Index rank : {2, 6, 10, 14, 20}) {
    const double optimum = std::sqrt(optimal_tail(A, rank)) / A.norm();
    const auto f = factorize_monarch(A, 1, 1, rank);
    BOOST_TEST(f.report.relative_error <= 1.001 * optimum + 1e-15, "rank " << rank);
    BOOST_TEST(f.report.lower_bound <= 1.001 * optimum + 1e-15, "rank " << rank);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(randomized_tolerance_holds_below_float_rounding, T, ScalarTypes) {
  // Exact rank 20: ||A||^2 minus the captured energy is rounding noise of ||A||^2 in float
  // (2^-24 relative), above tol^2 for tol < 3e-4; the tolerance loop then appended noise
  // blocks and lost Q's orthogonality (error 0.31 at tol 5e-4).
  const HostMatrix<T> A = HostMatrix<T>(random_matrix<T>(300, 20) * random_matrix<T>(20, 200));
  const bool single = std::is_same_v<RealOf<T>, float>;
  for (double tol :
       single ? std::vector<double>{5e-4, 2e-4, 1e-5} : std::vector<double>{1e-9, 1e-12}) {
    const auto f = factorize_lowrank(A, {.tolerance = tol, .method = LowRankMethod::randomized});
    BOOST_TEST_CONTEXT(ScalarTraits<T>::name << " tolerance " << tol) {
      BOOST_TEST(f.report.relative_error <= tol);
      BOOST_TEST(f.lowrank.rank() == 20);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(extreme_scales_keep_relative_errors, T, ScalarTypes) {
  // Squares of 1e-170 (float: 1e-24) underflow to 0 and of 1e160 (1e19) overflow: the
  // factorizations returned zero factors with error 0, or NaN reports. Scaled inputs must
  // give the relative errors and bounds of the unscaled matrix.
  using Real = RealOf<T>;
  const bool single = std::is_same_v<Real, float>;
  const double tol = single ? 1e-3 : 1e-9;
  const HostMatrix<T> A = random_matrix<T>(64, 64);
  struct Reports {
    FactorReport monarch, ks, lowrank, randomized, kron, blast;
  };
  auto reports = [](const HostMatrix<T>& W) {
    return Reports{
        factorize_monarch(W, 4, 4, 2).report,
        factorize_ks_chain(W, butterfly_patterns(64)).report,
        factorize_lowrank(W, {.rank = 3, .method = LowRankMethod::exact}).report,
        factorize_lowrank(W, {.tolerance = 0.9, .method = LowRankMethod::randomized}).report,
        factorize_kron(W, 8, 8, {.terms = 2}).report,
        factorize_blast(W, 2, 2, 4, {.steps = 20}).report,
    };
  };
  const Reports base = reports(A);
  for (double scale :
       single ? std::vector<double>{1e-24, 1e19} : std::vector<double>{1e-170, 1e160}) {
    const Reports got = reports(HostMatrix<T>(A * T(Real(scale))));
    auto same = [&](double x, double y) {
      return std::isnan(x) ? std::isnan(y) : std::abs(x - y) <= tol * std::abs(x);
    };
    BOOST_TEST_CONTEXT(ScalarTraits<T>::name << " scale " << scale) {
      for (auto [name, b, g] : {std::tuple{"monarch", base.monarch, got.monarch},
                                {"ks", base.ks, got.ks},
                                {"lowrank", base.lowrank, got.lowrank},
                                {"randomized", base.randomized, got.randomized},
                                {"kron", base.kron, got.kron},
                                {"blast", base.blast, got.blast}}) {
        BOOST_TEST(g.relative_error > 0.1, name);  // not zero factors
        BOOST_TEST(same(b.relative_error, g.relative_error),
                   name << ": " << b.relative_error << " vs " << g.relative_error);
        BOOST_TEST(same(b.bound, g.bound), name << ": " << b.bound << " vs " << g.bound);
        BOOST_TEST(same(b.lower_bound, g.lower_bound),
                   name << ": " << b.lower_bound << " vs " << g.lower_bound);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_zero_matrix_is_factorized_exactly) {
  // Every structure holds the zero matrix exactly. BLAST's iteration only shrank its random
  // start (relative error 1e271 against a norm floor); an inexact result must not read 0.
  const HostMatrix<double> Z = HostMatrix<double>::Zero(64, 64);
  struct Named {
    const char* name;
    double error;
    HostMatrix<double> dense;
  };
  const auto blast = factorize_blast(Z, 2, 2, 4, {.steps = 5});
  const auto monarch = factorize_monarch(Z, 4, 4, 2);
  const auto ks = factorize_ks_chain(Z, butterfly_patterns(64));
  const auto lowrank = factorize_lowrank(Z, {.rank = 3, .method = LowRankMethod::exact});
  const auto kron = factorize_kron(Z, 8, 8, {.terms = 2});
  for (const Named& r :
       {Named{"blast", blast.report.relative_error, blast.blast.to_dense()},
        Named{"monarch", monarch.report.relative_error, monarch.monarch.to_dense()},
        Named{"ks", ks.report.relative_error, ks.chain.to_dense()},
        Named{"lowrank", lowrank.report.relative_error, lowrank.lowrank.to_dense()},
        Named{"kron", kron.report.relative_error, kron.sum.to_dense()}}) {
    BOOST_TEST(r.error == 0, r.name << ": relative error " << r.error);
    BOOST_TEST(r.dense.isZero(0), r.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
