// The DFT and its inverse: a Cooley-Tukey chain times the digit reversal of its input.
#include <cmath>

#include "operators/transforms/fourier_chain.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {
namespace {

template <class T>
Product<KSChain<T>, Permutation<T>> fourier_transform(Index n, const TransformOptions& options,
                                                      bool inverse) {
  const char* who = inverse ? "inverse_dft" : "dft";
  const std::vector<Index> radices =
      transforms::radices(transforms::fourier_split(n, who), options.factors);
  // conj(F) = conj(chain) * perm: the inverse is the same chain with conjugate twiddles.
  transforms::ChainValues chain = transforms::fourier_chain(radices, inverse ? +1 : -1);
  double s = 1.0;
  if (options.normalization == Normalization::Orthonormal) {
    s = 1.0 / std::sqrt(double(n));
  } else if (inverse && options.normalization == Normalization::Backward) {
    s = 1.0 / double(n);
  }
  transforms::scale(chain.front(), s);
  return Product<KSChain<T>, Permutation<T>>(transforms::to_chain<T>(chain),
                                             Permutation<T>(transforms::digit_reversal(radices)));
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
