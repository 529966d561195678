// The hierarchical driver: split the chain, solve the two-factor problem for the fused
// halves, recurse on each half (papers/NOTES.md, "Hierarchical order").
#include <chrono>
#include <cmath>
#include <complex>
#include <numeric>

#include "factorize/butterfly/two_factor.hpp"
#include "factorize/common/checks.hpp"
#include "factorize/common/scaling.hpp"
#include "strop/factorize/butterfly.hpp"

namespace strop {
namespace {

KSPattern fuse_range(const std::vector<KSPattern>& patterns, std::size_t lo, std::size_t hi) {
  KSPattern fused = patterns[lo];
  for (std::size_t l = lo + 1; l < hi; ++l)
    fused = fuse(fused, patterns[l]);
  return fused;
}

template <class T>
struct Driver {
  const std::vector<KSPattern>& patterns;
  const KSFactorizeOptions& options;
  Context& ctx;
  double first_split_error = -1;  // squared optimum of the top-level split

  // Factors of patterns[lo, hi) whose product approximates W.
  void run(const detail::SplitSource<T>& W, std::size_t lo, std::size_t hi,
           std::vector<KSFactor<T>>& out) {
    if (hi - lo == 1) {
      // One factor: keep the entries on its support (the optimal projection).
      out.push_back(W.dense ? KSFactor<T>::from_dense(patterns[lo], *W.dense) : *W.factor);
      return;
    }
    const std::size_t split =
        options.order == HierarchicalOrder::left_to_right ? lo + 1 : lo + (hi - lo) / 2;
    // An orthonormal U goes left only where the left part is one final factor. A left part
    // that is split again gets √Σ: all of U's singular values are 1, so its split would keep
    // an arbitrary subspace, often directions whose Σ V^H rows are ~0 (a random 4-factor
    // chain with a rank bottleneck came back with error ~1 in the balanced order).
    // This for orthonormal = false too (its scales are balanced afterwards): √Σ at every
    // split turns singular values at the noise level σ into parts of size √σ, which the
    // later splits then get wrong at that scale (a 5-factor chain with a rank bottleneck and
    // noise 1e-12 came back with error 5e-7 in the balanced order).
    const bool orthonormal_left = split - lo == 1;
    auto solution = detail::solve_two_factor(W, fuse_range(patterns, lo, split),
                                             fuse_range(patterns, split, hi), orthonormal_left,
                                             options.device, ctx);
    if (first_split_error < 0) first_split_error = solution.squared_error;
    run({nullptr, &solution.left}, lo, split, out);
    run({nullptr, &solution.right}, split, hi, out);
  }
};

template <class T>
HostMatrix<T> permuted(const HostMatrix<T>& A, const std::vector<Index>& rows,
                       const std::vector<Index>& cols) {
  HostMatrix<T> out(A.rows(), A.cols());
  for (Index j = 0; j < A.cols(); ++j) {
    const Index source_col = cols.empty() ? j : cols[static_cast<std::size_t>(j)];
    for (Index i = 0; i < A.rows(); ++i)
      out(i, j) = A(rows.empty() ? i : rows[static_cast<std::size_t>(i)], source_col);
  }
  return out;
}

// The same product with the factors' norms within a factor of about 2 of their geometric
// mean: factor f is multiplied by 2^e_f with integer e_f summing to 0, so the product is
// unchanged exactly. e_f rounds the running sums of the ideal (real) exponents, whose total
// is 0, so each stays within 1 of its ideal.
template <class T>
void balance_scales(std::vector<KSFactor<T>>& factors) {
  std::vector<double> log_norms;
  for (const KSFactor<T>& factor : factors) {
    double squares = 0;
    for (const T& v : factor.values())
      squares += double(std::norm(v));
    if (!(squares > 0) || !std::isfinite(squares)) return;  // a zero product: nothing to balance
    log_norms.push_back(0.5 * std::log2(squares));
  }
  const double mean =
      std::accumulate(log_norms.begin(), log_norms.end(), 0.0) / double(log_norms.size());
  double running = 0;
  int applied = 0;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    running += mean - log_norms[f];
    const int exponent =
        f + 1 == factors.size() ? -applied : static_cast<int>(std::lround(running)) - applied;
    applied += exponent;
    std::vector<T> values = factors[f].values();
    detail::scale_by_power_of_two(values.data(), static_cast<Index>(values.size()), exponent);
    factors[f] = KSFactor<T>(factors[f].pattern(), std::move(values));
  }
}

// The factors of 2^exponent W from those of W (UnitScaled): factor l takes share l.
template <class T>
std::vector<KSFactor<T>> unscaled(std::vector<KSFactor<T>> factors, int exponent) {
  if (exponent == 0) return factors;
  const int parts = static_cast<int>(factors.size());
  for (int l = 0; l < parts; ++l) {
    KSFactor<T>& factor = factors[static_cast<std::size_t>(l)];
    std::vector<T> values = factor.values();
    detail::scale_by_power_of_two(values.data(), static_cast<Index>(values.size()),
                                  detail::exponent_share(exponent, l, parts));
    factor = KSFactor<T>(factor.pattern(), std::move(values));
  }
  return factors;
}

void validate_chain(const std::vector<KSPattern>& patterns, Index M, Index N) {
  require<PatternError>(!patterns.empty(), "factorize_ks_chain: the chain is empty");
  for (const KSPattern& p : patterns)
    p.validate();
  require<ShapeError>(patterns.front().rows() == M && patterns.back().cols() == N,
                      "factorize_ks_chain: the chain is ", patterns.front().rows(), "x",
                      patterns.back().cols(), ", the matrix is ", M, "x", N);
  for (std::size_t l = 0; l + 1 < patterns.size(); ++l) {
    require<PatternError>(chainable(patterns[l], patterns[l + 1]), "factorize_ks_chain: factors ",
                          l, " ", patterns[l], " and ", l + 1, " ", patterns[l + 1],
                          " are not chainable (need a_l c_l d_l == a_{l+1} b_{l+1} d_{l+1},",
                          " a_l | a_{l+1}, d_{l+1} | d_l, a_{l+1} | a_l c_l)");
  }
}

}  // namespace

template <class T>
KSFactorization<T> factorize_ks_chain(const HostMatrix<T>& A,
                                      const std::vector<KSPattern>& patterns,
                                      const KSFactorizeOptions& options, Context& ctx) {
  const RealOf<T> largest = detail::require_finite_matrix("factorize_ks_chain", A);
  detail::require_permutation("factorize_ks_chain", "row_permutation", options.row_permutation,
                              A.rows());
  detail::require_permutation("factorize_ks_chain", "column_permutation",
                              options.column_permutation, A.cols());
  validate_chain(patterns, A.rows(), A.cols());
  require<ShapeError>(options.order == HierarchicalOrder::balanced ||
                          options.order == HierarchicalOrder::left_to_right,
                      "factorize_ks_chain: unknown HierarchicalOrder ",
                      static_cast<int>(options.order));
  detail::require_device("factorize_ks_chain", options.device);
  const detail::DeviceScope device_scope(options.device == Device::cuda);

  const auto start = std::chrono::steady_clock::now();
  const bool permute = !options.row_permutation.empty() || !options.column_permutation.empty();
  const HostMatrix<T> Ap =
      permute ? permuted(A, options.row_permutation, options.column_permutation) : HostMatrix<T>();
  const HostMatrix<T>& P = permute ? Ap : A;  // what the chain approximates
  const detail::UnitScaled<T> scaled(P, largest);
  const HostMatrix<T>& W = scaled.matrix();
  Driver<T> driver{patterns, options, ctx};
  std::vector<KSFactor<T>> factors;
  factors.reserve(patterns.size());
  driver.run({&W, nullptr}, 0, patterns.size(), factors);
  if (!options.orthonormal) balance_scales(factors);
  KSChain<T> chain(unscaled(std::move(factors), scaled.exponent()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  FactorReport report;
  report.seconds = seconds;
  report.parameters = chain.parameter_count();
  report.method = patterns.size() <= 1 ? "ks projection"
                  : options.order == HierarchicalOrder::balanced
                      ? "ks hierarchical (balanced)"
                      : "ks hierarchical (left-to-right)";
  if (patterns.size() == 1) {
    report.bound = report.lower_bound = detail::relative_error(P, chain);
  } else {
    report.lower_bound = std::sqrt(driver.first_split_error) / std::max(double(W.norm()), 1e-300);
    if (patterns.size() == 2) report.bound = report.lower_bound;  // the split is the problem
  }
  if (options.compute_error) report.relative_error = detail::relative_error(P, chain);
  return {std::move(chain), options.row_permutation, options.column_permutation, report};
}

template <class T>
KSChain<T> factorize_two_factors(const HostMatrix<T>& W, const KSPattern& pi1, const KSPattern& pi2,
                                 bool orthonormal, Device device, Context& ctx) {
  const RealOf<T> largest = detail::require_finite_matrix("factorize_two_factors", W);
  detail::require_device("factorize_two_factors", device);
  const detail::DeviceScope device_scope(device == Device::cuda);
  const detail::UnitScaled<T> scaled(W, largest);
  auto solution =
      detail::solve_two_factor<T>({&scaled.matrix(), nullptr}, pi1, pi2, orthonormal, device, ctx);
  return KSChain<T>(
      unscaled<T>({std::move(solution.left), std::move(solution.right)}, scaled.exponent()));
}

#define STROP_INSTANTIATE(T)                                                                     \
  template KSFactorization<T> factorize_ks_chain(                                                \
      const HostMatrix<T>&, const std::vector<KSPattern>&, const KSFactorizeOptions&, Context&); \
  template KSChain<T> factorize_two_factors(const HostMatrix<T>&, const KSPattern&,              \
                                            const KSPattern&, bool, Device, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
