// The DFT and its inverse: a Cooley-Tukey chain times the digit reversal of its input.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>

#include "operators/transforms/fourier_chain.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {
namespace {

template <class T>
Product<KSChain<T>, Permutation<T>> build_fourier_transform(Index n,
                                                            const std::vector<Index>& radices,
                                                            const TransformOptions& options,
                                                            bool inverse) {
  // conj(F) = conj(chain) * perm: the inverse is the same chain with conjugate twiddles.
  transforms::ChainValues chain = transforms::fourier_chain(radices, inverse ? +1 : -1);
  double s = 1.0;
  if (options.normalization == Normalization::Orthonormal) {
    s = 1.0 / std::sqrt(double(n));
  } else if (inverse && options.normalization == Normalization::Backward) {
    s = 1.0 / double(n);
  }
  transforms::scale(chain.front(), s);
  Permutation<T> reversal(transforms::digit_reversal(radices));
  // The form lets the product run as one Stockham FFT (no digit reversal pass).
  detail::FourierForm form;
  form.n = n;
  form.sign = inverse ? +1 : -1;
  form.scale = s;
  form.input_order = reversal.shared_indices();
  auto roots = std::make_shared<std::vector<std::complex<double>>>(static_cast<std::size_t>(n));
  for (Index e = 0; e < n; ++e)
    (*roots)[std::size_t(e)] =
        std::polar(1.0, double(form.sign) * 2.0 * std::numbers::pi * double(e) / double(n));
  form.roots = std::move(roots);
  const KSChain<T> factors = transforms::to_chain<T>(chain);
  return Product<KSChain<T>, Permutation<T>>(KSChain<T>(factors.factors(), std::move(form)),
                                             std::move(reversal));
}

template <class T>
Product<KSChain<T>, Permutation<T>> fourier_transform(Index n, const TransformOptions& options,
                                                      bool inverse) {
  const char* who = inverse ? "inverse_dft" : "dft";
  const std::vector<Index> radices =
      transforms::radices(transforms::fourier_split(n, who), options);
  // Before anything of size n is allocated: every factor's size fits an index (PatternError
  // otherwise), and the largest table, the n r values of the factor of the largest radix r,
  // fits in host memory (ShapeError otherwise).
  transforms::stages_of(radices);
  const Index largest = n * *std::max_element(radices.begin(), radices.end());
  const auto build = [&] { return build_fourier_transform<T>(n, radices, options, inverse); };
  return detail::allocating_host(detail::concat(who, "(", n, ")'s largest factor"), largest,
                                 "values", sizeof(transforms::Complex), build);
}

}  // namespace

template <class T>
requires is_complex_v<T> Product<KSChain<T>, Permutation<T>> dft(Index n,
                                                                 const TransformOptions& options) {
  return fourier_transform<T>(n, options, false);
}

template <class T>
requires is_complex_v<T> Product<KSChain<T>, Permutation<T>> inverse_dft(
    Index n, const TransformOptions& options) {
  return fourier_transform<T>(n, options, true);
}

#define STROP_INSTANTIATE(T)                                                           \
  template Product<KSChain<T>, Permutation<T>> dft<T>(Index, const TransformOptions&); \
  template Product<KSChain<T>, Permutation<T>> inverse_dft<T>(Index, const TransformOptions&);
STROP_INSTANTIATE(std::complex<float>)
STROP_INSTANTIATE(std::complex<double>)

}  // namespace strop
