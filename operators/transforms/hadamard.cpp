// Hadamard transforms as chains: H_{r_1} ⊗ ... ⊗ H_{r_L}, factor l being
// I ⊗ H_{r_l} ⊗ I (NOTES.md: a Kronecker product is a KS chain with repeated values). These
// factors act on different digits and commute, so H^T is the same chain of transposed blocks.
#include <algorithm>
#include <bit>
#include <cmath>

#include "operators/transforms/chain_values.hpp"
#include "operators/transforms/hadamard_signs.hpp"
#include "operators/transforms/radix_plan.hpp"
#include "strop/core/error.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {
namespace {

using transforms::ChainValues;
using Signs = HostMatrix<double>;

Signs hadamard_signs(Index m) {
  if (m >= 1 && (m & (m - 1)) == 0) {
    // m may be small_hadamard_matrix's caller's: its m x m table must fit in host memory.
    const std::string what = detail::concat("hadamard matrix of order ", m);
    Signs h = detail::allocating_host(what, detail::checked_element_count(what.c_str(), m, m),
                                      "entries", sizeof(double), [m] { return Signs(m, m); });
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < m; ++j)
        h(i, j) = std::popcount(static_cast<std::uint64_t>(i & j)) % 2 ? -1.0 : 1.0;
    return h;
  }
  if (m == 12 || m == 20 || m == 28) {
    const detail::HadamardRowMasks rows = detail::paley_row_masks(int(m));
    Signs h(m, m);
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < m; ++j)
        h(i, j) = rows[std::size_t(i)] >> j & 1 ? -1.0 : 1.0;
    return h;
  }
  throw PatternError(detail::concat("hadamard: no Hadamard matrix of order ", m,
                                    " here (orders 2^k, 12, 20, 28)"));
}

transforms::SizeSplit hadamard_split(Index n) {
  require<PatternError>(hadamard_size_supported(n), "hadamard: n = ", n,
                        " is not supported (n = 2^k, or m 2^k with m in {12, 20, 28})");
  for (Index m : {Index(12), Index(20), Index(28)}) {
    if (n % m != 0 || ((n / m) & (n / m - 1)) != 0) continue;
    return {m, std::countr_zero(static_cast<std::uint64_t>(n / m))};
  }
  return {1, std::countr_zero(static_cast<std::uint64_t>(n))};
}

template <class T>
KSChain<T> build_hadamard_chain(Index n, const transforms::SizeSplit& split,
                                const std::vector<transforms::Stage>& stages,
                                const TransformOptions& options, bool inverse) {
  ChainValues chain;
  for (const transforms::Stage& s : stages) {
    const Signs h = hadamard_signs(s.r);
    chain.push_back(transforms::stage_factor(s.a, s.r, s.d, [&](Index k, Index l, Index) {
      return transforms::Complex(inverse ? h(l, k) : h(k, l));
    }));
  }
  // H H^T = n I, so the inverse is H^T / n.
  const double size = double(n);
  double s = 1.0;
  if (options.normalization == Normalization::Orthonormal) {
    s = 1.0 / std::sqrt(size);
  } else if (inverse && options.normalization == Normalization::Backward) {
    s = 1.0 / size;
  }
  transforms::scale(chain.front(), s);
  // The chain remembers what it is, so that the GPU can run the Walsh-Hadamard kernel.
  const detail::HadamardForm form{split.leading, split.stages, s, inverse};
  return KSChain<T>(transforms::to_chain<T>(chain).factors(), form);
}

template <class T>
KSChain<T> hadamard_chain(Index n, const TransformOptions& options, bool inverse) {
  const transforms::SizeSplit split = hadamard_split(n);
  const std::vector<Index> radices = transforms::radices(split, options);
  // Before anything is allocated: every factor's size fits an index (PatternError otherwise),
  // and the largest table, the n r values of the factor of the largest radix r, fits in host
  // memory (ShapeError otherwise).
  const std::vector<transforms::Stage> stages = transforms::stages_of(radices);
  const Index largest = n * *std::max_element(radices.begin(), radices.end());
  const auto build = [&] { return build_hadamard_chain<T>(n, split, stages, options, inverse); };
  return detail::allocating_host(
      detail::concat(inverse ? "inverse_hadamard(" : "hadamard(", n, ")'s largest factor"), largest,
      "values", sizeof(transforms::Complex), build);
}

}  // namespace

template <class T>
KSChain<T> hadamard(Index n, const TransformOptions& options) {
  return hadamard_chain<T>(n, options, false);
}

template <class T>
KSChain<T> inverse_hadamard(Index n, const TransformOptions& options) {
  return hadamard_chain<T>(n, options, true);
}

template <class T>
HostMatrix<T> small_hadamard_matrix(Index m) {
  const Signs signs = hadamard_signs(m);
  return detail::allocating_host(detail::concat("hadamard matrix of order ", m), m * m, "entries",
                                 sizeof(T), [&] { return HostMatrix<T>(signs.cast<T>()); });
}

#define STROP_INSTANTIATE(T)                                               \
  template KSChain<T> hadamard<T>(Index, const TransformOptions&);         \
  template KSChain<T> inverse_hadamard<T>(Index, const TransformOptions&); \
  template HostMatrix<T> small_hadamard_matrix<T>(Index);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
