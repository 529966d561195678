// Fitting Strassen-Tile operators: the closed-form encoded weights against an independent
// least-squares solve and against the sample-based fit with many samples; the sample fit's
// optimality on its own sample; the closed-form single-tile loss against Monte Carlo and
// its gradient against finite differences; the encoder fit from exact and from subset
// starts; the 2:4 baseline against order statistics; bad inputs against the typed errors.
#include <Eigen/QR>
#include <unsupported/Eigen/KroneckerProduct>

#include "reference.hpp"
#include "strop/factorize/stl.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

stl::Encoders random_encoders(Index t, Index r) {
  std::normal_distribution<double> normal;
  stl::Encoders enc;
  enc.tile = t;
  for (Eigen::MatrixXd* m : {&enc.encode_signal, &enc.encode_weight, &enc.decode}) {
    m->resize(r, t * t);
    for (Index k = 0; k < m->size(); ++k)
      m->data()[k] = normal(rng());
  }
  return enc;
}

// STL(X) for the operator's encoded weights, written from the definition with its own
// indexing (signals are columns; the paper's X_p = X^T; zero signals pad the last tile):
// vec(Y^T_{I,J}) = D^T sum_L (E_X vec(X^T_{I,L}) ⊙ Ŵ_{L,J}).
template <class T>
HostMatrix<T> stl_apply(const StrassenTile<T>& A, const HostMatrix<T>& X) {
  const stl::Encoders& enc = A.encoders();
  const Index t = A.tile(), r = A.rank(), nL = A.cols() / t, nJ = A.rows() / t;
  const Index B = X.cols(), nI = (B + t - 1) / t;
  HostMatrix<T> Y = HostMatrix<T>::Zero(A.rows(), B);
  for (Index I = 0; I < nI; ++I)
    for (Index J = 0; J < nJ; ++J) {
      Eigen::Matrix<T, Eigen::Dynamic, 1> colours = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(r);
      for (Index L = 0; L < nL; ++L) {
        Eigen::Matrix<T, Eigen::Dynamic, 1> tile = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(t * t);
        for (Index i = 0; i < t && I * t + i < B; ++i)
          for (Index a = 0; a < t; ++a)
            tile(i + t * a) = X(L * t + a, I * t + i);
        const Eigen::Matrix<T, Eigen::Dynamic, 1> encoded = enc.encode_signal.cast<T>() * tile;
        for (Index p = 0; p < r; ++p)
          colours(p) +=
              encoded(p) * A.encoded_weight()[static_cast<std::size_t>(p * nL * nJ + J * nL + L)];
      }
      const Eigen::Matrix<T, Eigen::Dynamic, 1> out = enc.decode.transpose().cast<T>() * colours;
      for (Index i = 0; i < t && I * t + i < B; ++i)
        for (Index b = 0; b < t; ++b)
          Y(J * t + b, I * t + i) = out(i + t * b);
    }
  return Y;
}

// w^T ⊗ I_t: vec(x w) = (w^T ⊗ I_t) vec(x) for t x t tiles.
Eigen::MatrixXd product_map(const Eigen::MatrixXd& w) {
  return Eigen::kroneckerProduct(w.transpose(), Eigen::MatrixXd::Identity(w.rows(), w.rows()));
}

// ||(w^T ⊗ I) - D^T diag(c) E_X||_F^2: the expected squared error over Gaussian x of the
// encoded weight c for the tile w.
double expected_tile_loss(const stl::Encoders& enc, const Eigen::MatrixXd& w,
                          const Eigen::VectorXd& c) {
  return (product_map(w) - enc.decode.transpose() * c.asDiagonal() * enc.encode_signal)
      .squaredNorm();
}

// The same summed over all tiles of an operator (W = A^T): the expected ||A x - STL(x)||^2
// of one tile of Gaussian signals, i.e. t times the per-signal expected squared error.
double expected_operator_loss(const StrassenTile<double>& S, const HostMatrix<double>& A) {
  const Index t = S.tile(), r = S.rank(), nL = A.cols() / t, nJ = A.rows() / t;
  double loss = 0;
  for (Index J = 0; J < nJ; ++J)
    for (Index L = 0; L < nL; ++L) {
      const Eigen::MatrixXd w = A.block(J * t, L * t, t, t).transpose();
      Eigen::VectorXd c(r);
      for (Index p = 0; p < r; ++p)
        c(p) = S.encoded_weight()[static_cast<std::size_t>(p * nL * nJ + J * nL + L)];
      loss += expected_tile_loss(S.encoders(), w, c);
    }
  return loss;
}

std::vector<double> flatten(const stl::Encoders& enc) {
  std::vector<double> v;
  for (const Eigen::MatrixXd* m : {&enc.encode_signal, &enc.encode_weight, &enc.decode})
    v.insert(v.end(), m->data(), m->data() + m->size());
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stl_fit)

// F vec(w) = argmin_c ||(w^T ⊗ I) - D^T diag(c) E_X||_F, solved here by QR on the design
// matrix with columns vec(d_p e_p^T): an independent check of G and H.
BOOST_AUTO_TEST_CASE(solution_matrix_is_the_least_squares_optimum) {
  for (auto [t, r] : {std::pair<Index, Index>{2, 5}, {2, 9}, {4, 20}, {4, 49}}) {
    const stl::Encoders enc = random_encoders(t, r);
    const Eigen::MatrixXd F = stl::solution_matrix(enc);
    BOOST_TEST(F.rows() == r);
    BOOST_TEST(F.cols() == t * t);
    Eigen::MatrixXd design(t * t * t * t, r);
    for (Index p = 0; p < r; ++p) {
      const Eigen::MatrixXd outer =
          enc.decode.row(p).transpose() * enc.encode_signal.row(p);  // d_p e_p^T
      design.col(p) = Eigen::Map<const Eigen::VectorXd>(outer.data(), outer.size());
    }
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(design);
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::MatrixXd w = random_matrix<double>(t, t);
      const Eigen::MatrixXd target = product_map(w);
      const Eigen::VectorXd expected =
          qr.solve(Eigen::Map<const Eigen::VectorXd>(target.data(), target.size()));
      const Eigen::VectorXd got = F * Eigen::Map<const Eigen::VectorXd>(w.data(), t * t);
      BOOST_TEST_CONTEXT("t=" << t << " r=" << r) {
        BOOST_TEST((got - expected).norm() <= 1e-9 * expected.norm());
      }
    }
  }
}

// Repeated colours make G singular: the pseudo-inverse still gives an optimum, as good as
// the one without the duplicate.
BOOST_AUTO_TEST_CASE(solution_matrix_handles_repeated_colours) {
  const stl::Encoders base = random_encoders(2, 4);
  stl::Encoders doubled = base;
  for (Eigen::MatrixXd* m : {&doubled.encode_signal, &doubled.encode_weight, &doubled.decode}) {
    Eigen::MatrixXd grown(5, 4);
    grown << *m, m->row(1);
    *m = grown;
  }
  const Eigen::MatrixXd w = random_matrix<double>(2, 2);
  const Eigen::Map<const Eigen::VectorXd> v(w.data(), 4);
  const Eigen::MatrixXd F = stl::solution_matrix(doubled);
  BOOST_TEST(F.allFinite());
  const double with = expected_tile_loss(doubled, w, F * v);
  const double without = expected_tile_loss(base, w, stl::solution_matrix(base) * v);
  BOOST_TEST(std::abs(with - without) <= 1e-10 * (1 + without));
  // The duplicated colour carries the minimum-norm split: half each.
  BOOST_TEST(std::abs((F * v)(1) - (F * v)(4)) <= 1e-10 * (1 + std::abs((F * v)(1))));
}

// Exact encoders reproduce A through either fit, for every scalar type.
BOOST_AUTO_TEST_CASE_TEMPLATE(exact_encoders_reproduce_the_matrix, T, ScalarTypes) {
  for (const stl::Encoders& enc : {stl::strassen_2x2(), stl::strassen_4x4()}) {
    const Index t = enc.tile;
    const HostMatrix<T> A = random_matrix<T>(2 * t, 3 * t);
    const HostMatrix<T> sample = random_matrix<T>(3 * t, 64 * t);
    for (bool sampled : {false, true}) {
      const StrassenTile<T> S =
          sampled ? stl::fit_encoded_weights(A, enc, sample) : stl::fit_encoded_weights(A, enc);
      BOOST_TEST_CONTEXT("t=" << t << " sampled=" << sampled << " " << ScalarTraits<T>::name) {
        BOOST_TEST(S.rows() == A.rows());
        BOOST_TEST(S.cols() == A.cols());
        BOOST_TEST(S.acts_per_signal());
        BOOST_TEST(relative_error<T>(S.to_dense(), A) <= 10 * tolerance<T>());
      }
    }
  }
}

// The closed-form expectation behind the isotropic fit and the tile objective, against
// Monte Carlo over Gaussian x: E_x ||vec(x w) - D^T(E_X vec x ⊙ c)||^2.
BOOST_AUTO_TEST_CASE(expected_tile_loss_matches_monte_carlo) {
  const Index t = 4;
  std::mt19937 subset_rng(3);
  const stl::Encoders enc = stl::rank49_subset(30, subset_rng);
  const Eigen::MatrixXd w = random_matrix<double>(t, t);
  const Eigen::VectorXd c = enc.encode_weight * Eigen::Map<const Eigen::VectorXd>(w.data(), t * t);
  const Index draws = 20000;
  double sum = 0, sum2 = 0;
  for (Index k = 0; k < draws; ++k) {
    const Eigen::MatrixXd x = random_matrix<double>(t, t);
    const Eigen::MatrixXd xw = x * w;
    const Eigen::VectorXd approx =
        enc.decode.transpose() *
        (enc.encode_signal * Eigen::Map<const Eigen::VectorXd>(x.data(), t * t)).cwiseProduct(c);
    const double e = (Eigen::Map<const Eigen::VectorXd>(xw.data(), t * t) - approx).squaredNorm();
    sum += e;
    sum2 += e * e;
  }
  const double mean = sum / double(draws);
  const double stderr_ = std::sqrt((sum2 / double(draws) - mean * mean) / double(draws));
  const double exact = expected_tile_loss(enc, w, c);
  BOOST_TEST(std::abs(mean - exact) <= 5 * stderr_, "mc " << mean << " exact " << exact);
  // and the TileObjective of a one-tile population is that expectation
  BOOST_TEST(std::abs(stl::TileObjective({w}).loss(enc) - exact) <= 1e-10 * exact);
}

// The population loss in moment form equals the mean of the per-tile Frobenius losses.
BOOST_AUTO_TEST_CASE(tile_objective_is_the_population_mean) {
  const auto population = stl::gaussian_tiles(4, 7, 11);
  const stl::Encoders enc = random_encoders(4, 12);
  double direct = 0, reference = 0;
  for (const auto& w : population) {
    direct += expected_tile_loss(
        enc, w, enc.encode_weight * Eigen::Map<const Eigen::VectorXd>(w.data(), 16));
    reference += product_map(w).squaredNorm();
  }
  direct /= 7;
  reference /= 7;
  const stl::TileObjective objective(population);
  BOOST_TEST(objective.tile() == 4);
  BOOST_TEST(std::abs(objective.loss(enc) - direct) <= 1e-11 * direct);
  BOOST_TEST(std::abs(objective.reference() - reference) <= 1e-12 * reference);
  BOOST_TEST(std::abs(objective.relative_error(enc) - direct / reference) <= 1e-11 * direct);
  // and the zero approximation has relative error 1, exact encoders 0
  stl::Encoders zero = enc;
  zero.decode.setZero();
  BOOST_TEST(std::abs(objective.relative_error(zero) - 1) <= 1e-12);
  BOOST_TEST(std::abs(objective.relative_error(stl::strassen_4x4())) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(tile_objective_gradient_matches_finite_differences) {
  for (auto [t, r] : {std::pair<Index, Index>{2, 5}, {4, 10}, {3, 11}}) {
    const stl::TileObjective objective(stl::gaussian_tiles(t, 9, 5));
    const stl::Encoders enc = random_encoders(t, r);
    stl::Encoders gradient;
    const double loss = objective.loss_and_gradient(enc, gradient);
    BOOST_TEST(std::abs(loss - objective.loss(enc)) <= 1e-12 * loss);
    const std::vector<double> analytic = flatten(gradient);
    BOOST_REQUIRE(analytic.size() == static_cast<std::size_t>(3 * r * t * t));
    std::vector<double> numeric;
    const double h = 1e-5;
    for (Eigen::MatrixXd stl::Encoders::*field :
         {&stl::Encoders::encode_signal, &stl::Encoders::encode_weight, &stl::Encoders::decode}) {
      for (Index k = 0; k < (enc.*field).size(); ++k) {
        stl::Encoders plus = enc, minus = enc;
        (plus.*field).data()[k] += h;
        (minus.*field).data()[k] -= h;
        numeric.push_back((objective.loss(plus) - objective.loss(minus)) / (2 * h));
      }
    }
    const Eigen::Map<const Eigen::VectorXd> a(analytic.data(), Index(analytic.size()));
    const Eigen::Map<const Eigen::VectorXd> n(numeric.data(), Index(numeric.size()));
    BOOST_TEST_CONTEXT("t=" << t << " r=" << r) {
      BOOST_TEST((a - n).norm() <= 1e-6 * a.norm(),
                 "|a-n| " << (a - n).norm() << " |a| " << a.norm());
    }
  }
}

// With many Gaussian samples the sample fit approaches the closed-form isotropic fit, and
// the closed form is the better of the two in expectation (it is the exact optimum there).
BOOST_AUTO_TEST_CASE(sample_fit_approaches_the_isotropic_fit) {
  std::mt19937 subset_rng(8);
  const stl::Encoders enc = stl::rank49_subset(24, subset_rng);
  const HostMatrix<double> A = random_matrix<double>(8, 8);
  const StrassenTile<double> iso = stl::fit_encoded_weights(A, enc);
  const StrassenTile<double> sampled =
      stl::fit_encoded_weights(A, enc, random_matrix<double>(8, 4 * 5000));
  const double iso_loss = expected_operator_loss(iso, A);
  const double sampled_loss = expected_operator_loss(sampled, A);
  BOOST_TEST(iso_loss <= sampled_loss * (1 + 1e-12));
  BOOST_TEST(sampled_loss <= iso_loss * 1.02, "sampled " << sampled_loss << " iso " << iso_loss);
  const Eigen::Map<const Eigen::VectorXd> a(iso.encoded_weight().data(),
                                            Index(iso.encoded_weight().size()));
  const Eigen::Map<const Eigen::VectorXd> b(sampled.encoded_weight().data(),
                                            Index(sampled.encoded_weight().size()));
  BOOST_TEST((a - b).norm() <= 0.1 * a.norm(), "rel diff " << (a - b).norm() / a.norm());
}

// On its own sample (a partial last tile included) the sample fit is a stationary point of
// the quadratic loss: no linear term along random directions of Ŵ. Also the operator's
// own application agrees with the definition written out here (layout of Ŵ).
BOOST_AUTO_TEST_CASE_TEMPLATE(sample_fit_is_optimal_on_its_sample, T, ScalarTypes) {
  using Real = RealOf<T>;
  const stl::Encoders enc = random_encoders(2, 6);
  const HostMatrix<T> A = random_matrix<T>(6, 8);
  const HostMatrix<T> X = random_matrix<T>(8, 2 * 17 + 1);
  const StrassenTile<T> S = stl::fit_encoded_weights(A, enc, X);
  const HostMatrix<T> Y = stl_apply(S, X);
  HostMatrix<T> applied = HostMatrix<T>::Zero(A.rows(), X.cols());
  S.apply(Op::NoTrans, view(X), view(applied), T(1), T(0));
  BOOST_TEST(relative_error<T>(applied, Y) <= tolerance<T>());

  using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
  const HostMatrix<Wide> target = A.template cast<Wide>() * X.template cast<Wide>();
  const auto loss = [&](const std::vector<T>& weights) {
    const StrassenTile<Wide> op(enc, A.rows(), A.cols(),
                                std::vector<Wide>(weights.begin(), weights.end()));
    return double(
        (target - stl_apply(op, HostMatrix<Wide>(X.template cast<Wide>()))).squaredNorm());
  };
  const double best = loss(S.encoded_weight());
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<T> plus = S.encoded_weight(), minus = plus;
    for (std::size_t k = 0; k < plus.size(); ++k) {
      const T delta = random_scalar<T>();
      plus[k] += delta;
      minus[k] -= delta;
    }
    // q(s) = best + s g + s^2 c along the direction: g = (q(1) - q(-1)) / 2.
    const double up = loss(plus), down = loss(minus);
    const double slope = (up - down) / 2, curvature = (up + down) / 2 - best;
    BOOST_TEST(curvature > 0);
    // float weights are rounded from the double solve: the slope is that rounding's; in
    // double it is the rounding of the losses (measured over 120 directions: at most 3.3e-8
    // and 7.6e-16 of the curvature).
    const double allowed = std::is_same_v<Real, float> ? 1e-6 : 1e-13;
    BOOST_TEST(std::abs(slope) <= allowed * curvature,
               "slope " << slope << " curvature " << curvature);
  }
  // and no worse on the sample than the isotropic fit
  const StrassenTile<T> iso = stl::fit_encoded_weights(A, enc);
  BOOST_TEST(best <= loss(iso.encoded_weight()) * (1 + 1e-5));
}

BOOST_AUTO_TEST_CASE(tile_fit_from_exact_encoders_stays_exact) {
  stl::TileFitOptions options;
  options.rank = 49;
  options.iterations = 200;
  options.initial = stl::strassen_4x4();
  const stl::TileFitResult fit = stl::fit_tile_encoders(options);
  BOOST_TEST(fit.initial_relative_error <= 1e-12);
  BOOST_TEST(fit.relative_error <= 1e-10);
  BOOST_TEST(fit.history.size() <= 200u);
  BOOST_TEST(
      std::all_of(fit.history.begin(), fit.history.end(), [](double e) { return e <= 1e-10; }));
  BOOST_TEST(stl::is_exact(fit.encoders, 1e-6));
}

// From a random rank-32 subset (relative error ~4, worse than zero) a few hundred steps
// go well below both the start and the zero approximation; the reported numbers are the
// objective's own.
BOOST_AUTO_TEST_CASE(tile_fit_reduces_the_error_of_a_subset_start) {
  stl::TileFitOptions options;
  options.rank = 32;
  options.iterations = 400;
  options.seed = 4;
  const stl::TileFitResult fit = stl::fit_tile_encoders(options);
  BOOST_TEST(fit.initial_relative_error > 1);
  BOOST_TEST(fit.relative_error < 0.5);
  BOOST_TEST(fit.history.size() == 400u);
  BOOST_TEST(fit.history.back() < 0.6);
  const stl::TileObjective objective(stl::gaussian_tiles(4, options.weight_population, 4));
  BOOST_TEST(std::abs(objective.relative_error(fit.encoders) - fit.relative_error) <=
             1e-9 * fit.relative_error);
  BOOST_TEST(std::abs(fit.alpha - objective.loss(fit.encoders) / 16) <= 1e-9 * fit.alpha);
  BOOST_TEST(std::abs(fit.initial_alpha / fit.initial_relative_error -
                      objective.reference() / 16) <= 1e-9 * objective.reference());
  // the start is a subset of the exact encoders: its rows are rows of strassen_4x4()
  // (checked through the same seed's subset)
  std::mt19937 rng(static_cast<std::mt19937::result_type>(options.seed + 1));
  BOOST_TEST(std::abs(objective.relative_error(stl::rank49_subset(32, rng)) -
                      fit.initial_relative_error) <= 1e-9 * fit.initial_relative_error);
  // more restarts never do worse than their first start
  options.restarts = 3;
  BOOST_TEST(stl::fit_tile_encoders(options).relative_error <= fit.relative_error * (1 + 1e-12));
}

// Other tile sizes start from given encoders; Strassen's 2 x 2 stays exact.
BOOST_AUTO_TEST_CASE(tile_fit_with_given_start) {
  stl::TileFitOptions options;
  options.tile = 2;
  options.rank = 6;
  options.iterations = 300;
  options.initial = random_encoders(2, 6);
  const stl::TileFitResult fit = stl::fit_tile_encoders(options);
  BOOST_TEST(fit.relative_error < 0.5 * fit.initial_relative_error);
  options.rank = 7;
  options.initial = stl::strassen_2x2();
  BOOST_TEST(stl::fit_tile_encoders(options).relative_error <= 1e-10);
}

BOOST_AUTO_TEST_CASE(prune_2_4_keeps_the_two_largest_of_each_group) {
  Eigen::MatrixXd w(8, 2);
  w << 1, 1,   //
      -3, 1,   //
      2, 1,    //
      0.5, 1,  //
      0, 4,    //
      0, -1,   //
      7, 0.5,  //
      -6, 3;
  // dropped: column 0 rows 0, 3 (1 + 0.25) and 4 or 5 (0); column 1 rows 2, 3 (ties keep
  // the lower rows 0, 1) and 5, 6 (1 + 0.25)
  const double dropped = 1 + 0.25 + 0 + 1 + 1 + 1 + 0.25;
  const stl::Prune24Result r = stl::prune_2_4({w}, 4000, 1);
  BOOST_TEST(std::abs(r.optimum_relative_error - dropped / w.squaredNorm()) <= 1e-14);
  BOOST_TEST(r.relative_error >= r.optimum_relative_error);
  BOOST_TEST(r.relative_error <= r.optimum_relative_error * 1.02);
  BOOST_TEST(r.sample_relative_error <= r.optimum_relative_error * 1.1);
  BOOST_TEST(std::abs(r.alpha - r.relative_error * w.squaredNorm() / 2) <= 1e-12);
}

// The paper's α_{2:4} ≈ 0.53 for 4 x 4 Gaussian tiles: E[sum of the two smallest of four
// squared N(0,1)] = 0.532; relative error α / 4.
BOOST_AUTO_TEST_CASE(prune_2_4_on_gaussian_tiles_matches_the_paper) {
  const auto population = stl::gaussian_tiles(4, 512, 21);
  const stl::Prune24Result r = stl::prune_2_4(population, 2048, 2);
  BOOST_TEST(std::abs(r.alpha - 0.532) <= 0.04, "alpha " << r.alpha);
  BOOST_TEST(std::abs(r.relative_error - r.alpha / 4) <= 0.01);
  BOOST_TEST(r.relative_error >= r.optimum_relative_error);
  BOOST_TEST(r.relative_error <= r.optimum_relative_error * 1.02);
  BOOST_TEST(stl::prune_2_4_relative_error(population, 2048, 2) == r.relative_error);
}

BOOST_AUTO_TEST_CASE(bad_inputs_throw_typed_errors) {
  const stl::Encoders enc = stl::strassen_2x2();
  const HostMatrix<double> A = random_matrix<double>(4, 6);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(HostMatrix<double>(random_matrix<double>(4, 5)), enc),
                    ShapeError);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(A, enc, random_matrix<double>(4, 8)), ShapeError);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(A, enc, HostMatrix<double>(6, 0)), ShapeError);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(HostMatrix<double>(0, 6), enc), ShapeError);
  BOOST_CHECK_THROW(
      stl::fit_encoded_weights(HostMatrix<double>(0, 6), enc, HostMatrix<double>(6, 2)),
      ShapeError);
  HostMatrix<double> bad = A;
  bad(1, 2) = std::nan("");
  BOOST_CHECK_THROW(stl::fit_encoded_weights(bad, enc), NumericalError);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(A, enc, HostMatrix<double>(bad.transpose())),
                    NumericalError);
  stl::Encoders broken = enc;
  broken.decode.resize(7, 3);
  BOOST_CHECK_THROW(stl::fit_encoded_weights(A, broken), ShapeError);
  // (N/t) r = 168 * 49 = 8232 unknowns: refused before any work
  BOOST_CHECK_THROW(stl::fit_encoded_weights(HostMatrix<double>(HostMatrix<double>::Zero(4, 672)),
                                             stl::strassen_4x4(),
                                             HostMatrix<double>(HostMatrix<double>::Zero(672, 4))),
                    ShapeError);

  stl::TileFitOptions options;
  options.iterations = 1;
  options.tile = 3;
  BOOST_CHECK_THROW(stl::fit_tile_encoders(options), ShapeError);  // no default start for t = 3
  options.tile = 4;
  options.rank = 50;
  BOOST_CHECK_THROW(stl::fit_tile_encoders(options), ShapeError);
  options.rank = 8;
  options.initial = stl::strassen_4x4();  // r = 49 != 8
  BOOST_CHECK_THROW(stl::fit_tile_encoders(options), ShapeError);
  options.initial.reset();
  options.learning_rate = 0;
  BOOST_CHECK_THROW(stl::fit_tile_encoders(options), ShapeError);
  options.learning_rate = 1e-2;
  options.weight_population = 0;
  BOOST_CHECK_THROW(stl::fit_tile_encoders(options), ShapeError);

  BOOST_CHECK_THROW(stl::TileObjective({}), ShapeError);
  BOOST_CHECK_THROW(stl::TileObjective({Eigen::MatrixXd::Zero(2, 2), Eigen::MatrixXd::Zero(3, 3)}),
                    ShapeError);
  BOOST_CHECK_THROW(stl::TileObjective({Eigen::MatrixXd::Ones(4, 4)}).loss(enc), ShapeError);
  // All-zero weights: every relative error would be 0 / 0 (NaN in the report).
  BOOST_CHECK_THROW(stl::TileObjective({Eigen::MatrixXd::Zero(2, 2), Eigen::MatrixXd::Zero(2, 2)}),
                    NumericalError);
  BOOST_CHECK_THROW(stl::prune_2_4({Eigen::MatrixXd::Zero(4, 4)}, 100, 0), NumericalError);
  BOOST_TEST(std::isfinite(
      stl::prune_2_4({Eigen::MatrixXd::Zero(4, 4), Eigen::MatrixXd::Ones(4, 4)}, 100, 0)
          .relative_error));
  BOOST_CHECK_THROW(stl::prune_2_4({Eigen::MatrixXd::Zero(3, 3)}, 100, 0), ShapeError);
  BOOST_CHECK_THROW(stl::prune_2_4({Eigen::MatrixXd::Zero(8, 2)}, 7, 0), ShapeError);
  BOOST_CHECK_THROW(stl::prune_2_4({}, 100, 0), ShapeError);
  Eigen::MatrixXd nan_tile = Eigen::MatrixXd::Zero(4, 4);
  nan_tile(0, 0) = std::nan("");
  BOOST_CHECK_THROW(stl::prune_2_4({nan_tile}, 100, 0), NumericalError);
}

// The message of the NumericalError that fit_tile_encoders(options) throws ("" if none).
std::string tile_fit_numerical_error(const stl::TileFitOptions& options) {
  try {
    stl::fit_tile_encoders(options);
  } catch (const NumericalError& e) {
    return e.what();
  }
  return "";
}

// A learning rate of 1e300 overflows the encoders after one Adam step. That used to reach
// validate() as "encode_signal (E_X) has NaN or Inf entries" from inside the objective; it
// is the descent diverging, and says so.
BOOST_AUTO_TEST_CASE(tile_fit_divergence_is_reported_as_such) {
  stl::TileFitOptions options;
  options.rank = 8;
  options.iterations = 100;
  options.learning_rate = 1e300;
  for (Index restarts : {1, 3}) {
    options.restarts = restarts;
    const std::string message = tile_fit_numerical_error(options);
    BOOST_TEST(message.find("the loss diverged") != std::string::npos, "message: " << message);
    BOOST_TEST(message.find("restart 0") != std::string::npos, "message: " << message);
    BOOST_TEST(message.find("learning rate 1e+300") != std::string::npos, "message: " << message);
  }
  // Diverging from a given start too.
  options.restarts = 1;
  options.tile = 2;
  options.rank = 6;
  options.initial = random_encoders(2, 6);
  const std::string message = tile_fit_numerical_error(options);
  BOOST_TEST(message.find("the loss diverged") != std::string::npos, "message: " << message);
  // A start whose loss already overflows is named as such, not as NaN encoders.
  options.learning_rate = 1e-2;
  options.rank = 7;
  options.initial = stl::strassen_2x2();
  options.initial->decode *= 1e200;
  options.iterations = 1;
  const std::string start = tile_fit_numerical_error(options);
  BOOST_TEST(start.find("starting encoders") != std::string::npos, "message: " << start);
  // A merely large learning rate that stays finite is no error: the best iterate is kept.
  options = {};
  options.rank = 8;
  options.iterations = 50;
  options.learning_rate = 10;
  const stl::TileFitResult fit = stl::fit_tile_encoders(options);
  BOOST_TEST(std::isfinite(fit.relative_error));
  BOOST_TEST(fit.relative_error <= fit.initial_relative_error);
}

BOOST_AUTO_TEST_SUITE_END()
