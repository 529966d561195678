#pragma once
// The transforms are built in complex double precision, as plain (pattern, values) factors,
// then converted once to the caller's scalar type: twiddles stay accurate in float, and the
// real-arithmetic rewrite of the DCT works on one representation.
#include <complex>
#include <vector>

#include "strop/operators/ks_chain.hpp"

namespace strop::transforms {

using Complex = std::complex<double>;

// One KS factor; values in KSFactor's (a, b, c, d) order.
struct FactorValues {
  KSPattern pattern;
  std::vector<Complex> values;

  Complex& at(Index i, Index k, Index l, Index j) {
    return values[static_cast<std::size_t>(((i * pattern.b + k) * pattern.c + l) * pattern.d + j)];
  }
  Complex at(Index i, Index k, Index l, Index j) const {
    return values[static_cast<std::size_t>(((i * pattern.b + k) * pattern.c + l) * pattern.d + j)];
  }
};
using ChainValues = std::vector<FactorValues>;

// A factor of pattern (a, r, r, d) whose every (i, j) block is entry(k, l, j) (independent of i).
// PatternError where its size overflows an index (a transform no machine holds).
template <class Entry>
FactorValues stage_factor(Index a, Index r, Index d, Entry&& entry) {
  const KSPattern pattern{a, r, r, d};
  pattern.validate();
  FactorValues f{pattern, std::vector<Complex>(static_cast<std::size_t>(pattern.nnz()))};
  for (Index k = 0; k < r; ++k)
    for (Index l = 0; l < r; ++l)
      for (Index j = 0; j < d; ++j) {
        const Complex w = entry(k, l, j);
        for (Index i = 0; i < a; ++i)
          f.at(i, k, l, j) = w;
      }
  return f;
}

// Multiplies every value of one factor (the place to fold a global scale).
void scale(FactorValues& factor, double s);

// The factors as a KSChain<T>. For a real T the values must be real (imaginary parts are
// dropped; the builders only produce real values for real transforms).
template <class T>
KSChain<T> to_chain(const ChainValues& chain);

}  // namespace strop::transforms
