// Low-rank approximation: truncated SVD, or the randomized range finder (Halko, Martinsson,
// Tropp 2011, Alg. 4.4 with re-orthonormalised power iterations; with a tolerance, the
// blocked adaptive variant) followed by an SVD of the small projection Q^H A.
#include <Eigen/QR>
#include <chrono>
#include <cmath>
#include <random>

#include "factorize/common/checks.hpp"
#include "factorize/common/scaling.hpp"
#include "factorize/svd/block_svd.hpp"
#include "strop/factorize/lowrank.hpp"

namespace strop {
namespace {

template <class T>
HostMatrix<T> gaussian(Index rows, Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  HostMatrix<T> m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) {
      if constexpr (is_complex_v<T>) {
        const double re = normal(rng);
        m(i, j) = T(RealOf<T>(re), RealOf<T>(normal(rng)));
      } else {
        m(i, j) = T(normal(rng));
      }
    }
  return m;
}

// Orthonormal basis of the range of y (thin Q of a Householder QR).
template <class T>
HostMatrix<T> orthonormal_basis(const HostMatrix<T>& y) {
  Eigen::HouseholderQR<HostMatrix<T>> qr(y);
  return qr.householderQ() * HostMatrix<T>::Identity(y.rows(), y.cols());
}

// Removes the components along q (twice: one Gram-Schmidt pass loses orthogonality).
template <class T>
void project_out(const HostMatrix<T>& q, HostMatrix<T>& y) {
  if (q.cols() == 0) return;
  for (int pass = 0; pass < 2; ++pass)
    y -= q * (q.adjoint() * y);
}

// An orthonormal basis Q for `columns` directions of A's range, sharpened by power
// iterations and kept orthogonal to `previous`.
template <class T>
HostMatrix<T> range_block(const HostMatrix<T>& A, const HostMatrix<T>& previous, Index columns,
                          Index power_iterations, std::mt19937_64& rng) {
  HostMatrix<T> y = A * gaussian<T>(A.cols(), columns, rng);
  project_out(previous, y);
  HostMatrix<T> q = orthonormal_basis(y);
  for (Index it = 0; it < power_iterations; ++it) {
    HostMatrix<T> z = A.adjoint() * q;
    z = orthonormal_basis(z);
    y = A * z;
    project_out(previous, y);
    q = orthonormal_basis(y);
  }
  return q;
}

// Smallest k <= max_rank with extra + Σ_{i>=k} s_i^2 <= target (squared norms).
template <class Real>
Index rank_for(const std::vector<Real>& s, Index max_rank, double extra, double target) {
  double tail = extra;
  for (Index i = max_rank; i < static_cast<Index>(s.size()); ++i)
    tail += double(s[static_cast<std::size_t>(i)]) * double(s[static_cast<std::size_t>(i)]);
  for (Index k = max_rank; k > 0; --k) {
    const double sk = double(s[static_cast<std::size_t>(k - 1)]);
    if (tail + sk * sk > target) return k;
    tail += sk * sk;
  }
  return 0;
}

}  // namespace

template <class T>
LowRankFactorization<T> factorize_lowrank(const HostMatrix<T>& A, const LowRankOptions& options,
                                          Context& ctx) {
  const RealOf<T> largest = detail::require_finite_matrix("factorize_lowrank", A);
  const Index m = std::min(A.rows(), A.cols());
  // Checked before use: block_size 0 looped forever, a negative oversampling asked for a
  // negative number of columns or silently lowered the rank.
  require<ShapeError>(options.rank >= 0 && options.oversampling >= 0 &&
                          options.power_iterations >= 0 && options.block_size >= 1,
                      "factorize_lowrank: need rank >= 0, oversampling >= 0, power_iterations >= "
                      "0 and block_size >= 1; got rank ",
                      options.rank, ", oversampling ", options.oversampling, ", power_iterations ",
                      options.power_iterations, ", block_size ", options.block_size);
  require<ShapeError>(
      options.method == LowRankMethod::automatic || options.method == LowRankMethod::exact ||
          options.method == LowRankMethod::randomized,
      "factorize_lowrank: unknown LowRankMethod ", static_cast<int>(options.method));
  const bool by_rank = options.rank > 0;
  require<ShapeError>(by_rank || (options.tolerance > 0 && options.tolerance < 1),
                      "factorize_lowrank: give a rank >= 1 or a tolerance in (0, 1); got rank ",
                      options.rank, ", tolerance ", options.tolerance);
  require<ShapeError>(options.rank <= m, "factorize_lowrank: rank ", options.rank,
                      " exceeds min(M, N) = ", m);
  detail::require_device("factorize_lowrank", options.device);
  const detail::DeviceScope device_scope(options.device == Device::cuda);

  const auto start = std::chrono::steady_clock::now();
  const detail::UnitScaled<T> scaled(A, largest);
  const HostMatrix<T>& W = scaled.matrix();
  const double norm2 = double(W.squaredNorm());
  const double target = options.tolerance * options.tolerance * norm2;
  bool randomized = options.method == LowRankMethod::randomized;
  if (options.method == LowRankMethod::automatic)
    randomized = m > 1024 && (by_rank ? options.rank < m / 8 : true);

  // W ≈ Q (Q^H W) with Q = I for the exact SVD; `outside` = ||W - Q Q^H W||^2 with a tolerance.
  HostMatrix<T> q;
  double outside = 0;
  if (randomized) {
    std::mt19937_64 rng(options.seed);
    if (by_rank) {
      q = range_block(W, HostMatrix<T>(W.rows(), 0),
                      std::min(m, options.rank + options.oversampling), options.power_iterations,
                      rng);
    } else {
      // The residual W - Q Q^H W is kept and its norm measured directly: ||W||^2 minus the
      // captured energy cancels to the rounding of ||W||^2, which in float is above the target
      // of tolerances below 3e-4 (the loop then appended noise blocks, Q lost its
      // orthogonality, errors of 0.3). Blocks sample the residual, not W: their samples then
      // have no large part along Q whose removal would cancel to rounding noise.
      HostMatrix<T> residual = W;
      outside = norm2;
      q.resize(W.rows(), 0);
      while (q.cols() < m && outside > target) {
        const Index add = std::min(options.block_size, m - q.cols());
        HostMatrix<T> block = range_block(residual, q, add, options.power_iterations, rng);
        residual -= block * (block.adjoint() * residual);
        outside = double(residual.squaredNorm());
        HostMatrix<T> grown(W.rows(), q.cols() + block.cols());
        grown << q, block;
        q = std::move(grown);
      }
    }
  }
  const HostMatrix<T> projected = randomized ? HostMatrix<T>(q.adjoint() * W) : HostMatrix<T>();
  const HostMatrix<T>& core = randomized ? projected : W;

  const Index full = std::min(core.rows(), core.cols());
  std::vector<T> values(core.data(), core.data() + core.size());
  detail::BlockSvd<T> svd =
      detail::block_svd(values, 1, core.rows(), core.cols(), full, options.device, ctx);
  const Index rank =
      by_rank ? std::min(options.rank, full) : rank_for(svd.s, full, outside, target);
  double tail = outside;
  for (Index i = rank; i < full; ++i)
    tail += double(svd.s[static_cast<std::size_t>(i)]) * double(svd.s[static_cast<std::size_t>(i)]);

  using Matrix = HostMatrix<T>;
  const Eigen::Map<const Matrix> U(svd.u.data(), core.rows(), full);
  const Eigen::Map<const Matrix> VH(svd.vh.data(), full, core.cols());
  Eigen::Matrix<T, Eigen::Dynamic, 1> root(rank);
  for (Index i = 0; i < rank; ++i)
    root(i) = T(std::sqrt(svd.s[static_cast<std::size_t>(i)]));
  Matrix left = U.leftCols(rank) * root.asDiagonal();
  if (randomized) left = q * left;
  Matrix right = root.asDiagonal() * VH.topRows(rank);
  const int e = scaled.exponent();
  detail::scale_by_power_of_two(left.data(), left.size(), detail::exponent_share(e, 0, 2));
  detail::scale_by_power_of_two(right.data(), right.size(), detail::exponent_share(e, 1, 2));
  LowRank<T> lowrank(std::move(left), std::move(right));

  FactorReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = lowrank.parameter_count();
  report.method = randomized ? "randomized svd" : "truncated svd";
  const double norm = std::max(std::sqrt(norm2), 1e-300);
  if (!randomized) report.bound = report.lower_bound = std::sqrt(tail) / norm;
  if (options.compute_error) report.relative_error = detail::relative_error(A, lowrank);
  return {std::move(lowrank), report};
}

#define STROP_INSTANTIATE(T)                                                                      \
  template LowRankFactorization<T> factorize_lowrank(const HostMatrix<T>&, const LowRankOptions&, \
                                                     Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
