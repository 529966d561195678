// The paper's baseline for the single-tile problem: magnitude 2:4 pruning of the weights,
// then a least-squares refit of the kept values over a fixed Gaussian sample of signals
// (appendix B.1). For y = x w the error of column j is x (w_j - w̃_j); over a sample X the
// refit of the kept rows K_j solves (X^T X)_{KK} v = (X^T X w_j)_K, and for Gaussian x the
// expected error is exactly ||w_j - w̃_j||^2 per row of x, which is what we report (the
// same expectation TileObjective computes for STL).
#include <Eigen/Cholesky>
#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "strop/core/error.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {
namespace {

// Rows kept in column j: in each group of 4 consecutive rows, the two of largest |w|
// (the lower row on ties), in increasing order.
std::vector<Index> kept_rows(const Eigen::MatrixXd& w, Index j) {
  std::vector<Index> kept;
  for (Index g = 0; g < w.rows(); g += 4) {
    std::array<Index, 4> order{g, g + 1, g + 2, g + 3};
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return std::abs(w(a, j)) > std::abs(w(b, j)); });
    kept.push_back(std::min(order[0], order[1]));
    kept.push_back(std::max(order[0], order[1]));
  }
  return kept;
}

}  // namespace

Prune24Result prune_2_4(const std::vector<Eigen::MatrixXd>& population, Index samples,
                        std::uint64_t seed) {
  constexpr const char* name = "prune_2_4";
  require<ShapeError>(!population.empty(), name, ": the weight population is empty");
  const Index k = population.front().rows(), m = population.front().cols();
  require<ShapeError>(k >= 4 && k % 4 == 0 && m >= 1, name,
                      ": tiles need a multiple of 4 rows (input features) and >= 1 column, got ", k,
                      "x", m);
  require<ShapeError>(samples >= k, name, ": ", samples, " signals cannot determine a refit of ", k,
                      " input features");
  for (std::size_t n = 0; n < population.size(); ++n) {
    require<ShapeError>(population[n].rows() == k && population[n].cols() == m, name, ": tile ", n,
                        " is ", population[n].rows(), "x", population[n].cols(), ", expected ", k,
                        "x", m);
    require<NumericalError>(population[n].allFinite(), name, ": tile ", n,
                            " has NaN or Inf entries");
  }
  // The errors are relative to the population's norm; all zero would give 0 / 0.
  require<NumericalError>(std::any_of(population.begin(), population.end(),
                                      [](const Eigen::MatrixXd& w) { return !w.isZero(0); }),
                          name, ": every weight tile is zero; a relative error is undefined");

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(samples, k);
  for (Index i = 0; i < x.size(); ++i)
    x.data()[i] = normal(rng);
  const Eigen::MatrixXd gram = x.transpose() * x;

  double total = 0, expected = 0, optimum = 0, sample_total = 0, sample_error = 0;
  for (const Eigen::MatrixXd& w : population) {
    Eigen::MatrixXd pruned = Eigen::MatrixXd::Zero(k, m);
    for (Index j = 0; j < m; ++j) {
      const std::vector<Index> kept = kept_rows(w, j);
      const Index n = static_cast<Index>(kept.size());
      Eigen::MatrixXd sub(n, n);
      Eigen::VectorXd rhs(n);
      const Eigen::VectorXd target = gram * w.col(j);
      for (Index a = 0; a < n; ++a) {
        rhs(a) = target(kept[a]);
        for (Index b = 0; b < n; ++b)
          sub(a, b) = gram(kept[a], kept[b]);
      }
      const Eigen::VectorXd refit = sub.ldlt().solve(rhs);
      double dropped = w.col(j).squaredNorm();
      for (Index a = 0; a < n; ++a) {
        pruned(kept[a], j) = refit(a);
        dropped -= w(kept[a], j) * w(kept[a], j);
      }
      optimum += dropped;
    }
    const Eigen::MatrixXd residual = w - pruned;
    total += w.squaredNorm();
    expected += residual.squaredNorm();
    sample_total += (x * w).squaredNorm();
    sample_error += (x * residual).squaredNorm();
  }
  Prune24Result result;
  result.relative_error = expected / total;
  result.alpha = expected / double(population.size()) / double(m);
  result.sample_relative_error = sample_error / sample_total;
  result.optimum_relative_error = std::max(optimum, 0.0) / total;
  return result;
}

double prune_2_4_relative_error(const std::vector<Eigen::MatrixXd>& population, Index samples,
                                std::uint64_t seed) {
  return prune_2_4(population, samples, seed).relative_error;
}

}  // namespace strop::stl
