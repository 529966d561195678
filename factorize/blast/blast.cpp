// BLAST factorization driver: normalisation, initialisation and the final rescaling of
// papers/NOTES.md ("The exact BLAST PrecGD"); the iteration is blast_precgd.cpp, on either device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "factorize/blast/blast_precgd.hpp"
#include "factorize/common/checks.hpp"
#include "factorize/common/scaling.hpp"
#include "operators/blr/blr_support.hpp"

namespace strop {
namespace {

template <class T>
void fill_normal(T* values, Index count, double scale, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  for (Index n = 0; n < count; ++n) {
    if constexpr (is_complex_v<T>) {
      const double re = normal(rng);
      values[n] = T(RealOf<T>(re * scale / std::sqrt(2.0)),
                    RealOf<T>(normal(rng) * scale / std::sqrt(2.0)));
    } else {
      values[n] = T(normal(rng) * scale);
    }
  }
}

// torch.std: unbiased, about the mean.
template <class T>
double standard_deviation(const HostMatrix<T>& A) {
  const T mean = A.mean();
  double sum = 0;
  for (Index n = 0; n < A.size(); ++n)
    sum += double(std::norm(A.data()[n] - mean));
  return std::sqrt(sum / double(std::max<Index>(A.size() - 1, 1)));
}

}  // namespace

template <class T>
BlastFactorization<T> factorize_blast(const HostMatrix<T>& A, Index row_blocks, Index col_blocks,
                                      Index rank, const BlastFactorizeOptions& options,
                                      Context& ctx) {
  const RealOf<T> largest = detail::require_finite_matrix("factorize_blast", A);
  const BlockGrid g =
      detail::make_block_grid("factorize_blast", A.rows(), A.cols(), row_blocks, col_blocks, rank);
  require<ShapeError>(rank >= 1, "factorize_blast: rank must be >= 1, got ", rank);
  require<ShapeError>(options.steps >= 0, "factorize_blast: steps must be >= 0, got ",
                      options.steps);
  // Finite, or the step size and the preconditioner's eps turn NaN/Inf inside the iteration.
  require<ShapeError>(std::isfinite(options.delta) && options.delta >= 0 &&
                          std::isfinite(options.learning_rate) && options.learning_rate > 0 &&
                          std::isfinite(options.end_factor) && options.end_factor >= 0,
                      "factorize_blast: need finite delta >= 0, learning_rate > 0 and end_factor "
                      ">= 0; got delta ",
                      options.delta, ", learning_rate ", options.learning_rate, ", end_factor ",
                      options.end_factor);
  detail::require_device("factorize_blast", options.device);
  const detail::DeviceScope device_scope(options.device == Device::cuda);

  const auto start = std::chrono::steady_clock::now();
  // The standard deviation of A itself over- or underflows at extreme scales (float entries
  // of 1e20 square to Inf): it is taken on the power-of-two scaled copy.
  const detail::UnitScaled<T> scaled(A, largest);
  double scale = standard_deviation(scaled.matrix());
  if (!(scale > 0)) scale = 1;  // a constant matrix: nothing to normalise
  const HostMatrix<T> An = scaled.matrix() / T(scale);

  std::mt19937_64 rng(options.seed);
  detail::BlastState<T> state{row_blocks,
                              col_blocks,
                              rank,
                              HostMatrix<T>(A.rows(), rank),
                              HostMatrix<T>(rank, A.cols()),
                              std::vector<T>(static_cast<std::size_t>(g.block_count() * rank))};
  const double factor_scale = 0.001 / std::sqrt(double(rank));
  fill_normal(state.B.data(), state.B.size(), factor_scale, rng);
  fill_normal(state.C.data(), state.C.size(), factor_scale, rng);
  fill_normal(state.d.data(), static_cast<Index>(state.d.size()), 1.0, rng);

  std::vector<double> history;
  auto after_step = [&](Index step, double error, double lr) {
    history.push_back(error);
    return options.progress ? options.progress({step, error, lr}) : true;
  };
  // The all-zero matrix is exactly BLAST with zero couplings; the iteration would only shrink
  // its random start towards zero and report a meaningless relative error.
  if (largest == 0) {
    std::fill(state.d.begin(), state.d.end(), T(0));
  } else {
    detail::blast_iterate(An, state, options, after_step, ctx);
  }

  // Blast storage: U_k = B_k column-major one after another; V_l = C_l, already contiguous
  // in the column-major r x N matrix C; s_{k,l} = d_kl * std * 2^exponent undoes the
  // normalisation.
  const Index p = g.block_height();
  std::vector<T> left(static_cast<std::size_t>(A.rows() * rank));
  for (Index k = 0; k < row_blocks; ++k)
    Eigen::Map<HostMatrix<T>>(left.data() + k * p * rank, p, rank) = state.B.middleRows(k * p, p);
  std::vector<T> right(state.C.data(), state.C.data() + state.C.size());
  for (T& v : state.d)
    v = detail::times_power_of_two(v * T(scale), scaled.exponent());
  Blast<T> blast(A.rows(), A.cols(), row_blocks, col_blocks, rank, std::move(left),
                 std::move(state.d), std::move(right));

  FactorReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = blast.parameter_count();
  report.method = "blast precgd";
  if (options.compute_error) report.relative_error = detail::relative_error(A, blast);
  return {std::move(blast), report, std::move(history)};
}

#define STROP_INSTANTIATE(T)                                                                \
  template BlastFactorization<T> factorize_blast(const HostMatrix<T>&, Index, Index, Index, \
                                                 const BlastFactorizeOptions&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
