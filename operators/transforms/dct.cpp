// The DCT-II as a real chain: Makhoul's algorithm (v = x's even samples forward then its odd
// samples backward; X_k = Re(exp(-i pi k / 2n) V_k) with V the DFT of v), with the complex
// Cooley-Tukey chain rewritten over the reals (see transforms.hpp for why it stays
// Kronecker-sparse). The inverse is the transposed chain of a differently scaled DCT-II.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "operators/transforms/fourier_chain.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {
namespace {

using transforms::ChainValues;
using transforms::Complex;
using transforms::FactorValues;

// The pattern of realify's factor (below); PatternError where its size overflows an index.
KSPattern real_pattern(const KSPattern& complex, bool real_rows, bool real_columns) {
  const KSPattern pattern{complex.a, (real_rows ? 1 : 2) * complex.b,
                          (real_columns ? 1 : 2) * complex.c, complex.d};
  pattern.validate();
  return pattern;
}

// A complex factor (a, r, r, d) as a real one (a, 2r, 2r, d): the real/imaginary index sits
// before the mixed digit on the rows and after it on the columns, each complex entry w
// becoming [[Re w, -Im w], [Im w, Re w]]. Chained, factor l's columns put it after digit l,
// where factor l+1's rows expect it. real_rows keeps only the real-part rows (the first
// factor: the DCT is the real part); real_columns only the real-input columns (the last
// factor: the signal is real).
FactorValues realify(const FactorValues& f, bool real_rows, bool real_columns) {
  const auto [a, r, c, d] = f.pattern;
  const Index row_parts = real_rows ? 1 : 2;
  const Index column_parts = real_columns ? 1 : 2;
  const KSPattern pattern = real_pattern(f.pattern, real_rows, real_columns);
  FactorValues out{pattern, std::vector<Complex>(static_cast<std::size_t>(pattern.nnz()))};
  for (Index i = 0; i < a; ++i)
    for (Index k = 0; k < r; ++k)
      for (Index l = 0; l < r; ++l)
        for (Index j = 0; j < d; ++j) {
          const Complex w = f.at(i, k, l, j);
          const double block[2][2] = {{w.real(), -w.imag()}, {w.imag(), w.real()}};
          for (Index p = 0; p < row_parts; ++p)
            for (Index q = 0; q < column_parts; ++q)
              out.at(i, p * r + k, l * column_parts + q, j) = block[p][q];
        }
  return out;
}

// Row scales of the chain that is built: for the forward transform (see Normalization), or
// for the one whose transpose is the inverse. With sigma_0 = sqrt(1/n), sigma_k = sqrt(2/n),
// the orthonormal DCT-II C_o = diag(sigma) C (C: the plain cosine sums) is orthogonal, so
// C^-1 = (diag(sigma^2) C)^T.
std::vector<double> dct_row_scales(Index n, Normalization norm, bool inverse) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k) {
    const double sigma2 = (k == 0 ? 1.0 : 2.0) / double(n);
    double v = 0;
    switch (norm) {
      case Normalization::Backward:  // forward 2C; inverse (2C)^-1 = (diag(sigma^2 / 2) C)^T
        v = inverse ? sigma2 / 2 : 2.0;
        break;
      case Normalization::Orthonormal:
        v = std::sqrt(sigma2);
        break;
      case Normalization::None:  // inverse: REDFT01 = 2n (2C)^-1 = (diag(n sigma^2) C)^T
        v = inverse ? double(n) * sigma2 : 2.0;
        break;
    }
    s[static_cast<std::size_t>(k)] = v;
  }
  return s;
}

// X_k scaled by dct_row_scales(n, norm, inverse)[k], as real factors (real rows, real
// columns), input in the digit-reversed Makhoul order. Run through building_dct (below), which
// checks the factors' sizes first.
ChainValues real_dct_chain(Index n, const std::vector<Index>& radices, Normalization norm,
                           bool inverse) {
  ChainValues complex_chain = transforms::fourier_chain(radices, -1);
  const std::vector<double> row_scale = dct_row_scales(n, norm, inverse);
  // The twiddle exp(-i pi k / 2n) and the scale fold into the first factor's rows
  // (a = 1, so row k d + j holds output k d + j).
  FactorValues& first = complex_chain.front();
  const Index d = first.pattern.d;
  for (Index k = 0; k < first.pattern.b; ++k)
    for (Index j = 0; j < d; ++j) {
      const Index out = k * d + j;
      const Complex twiddle = std::polar(row_scale[static_cast<std::size_t>(out)],
                                         -std::numbers::pi * double(out) / double(2 * n));
      for (Index l = 0; l < first.pattern.c; ++l)
        first.at(0, k, l, j) *= twiddle;
    }
  ChainValues real_chain;
  for (std::size_t f = 0; f < complex_chain.size(); ++f)
    real_chain.push_back(realify(complex_chain[f], f == 0, f + 1 == complex_chain.size()));
  return real_chain;
}

// Where the chain's input position i reads x from: Makhoul's v_t = x_{2t} (t < ceil(n/2)),
// v_{n-1-t} = x_{2t+1}, taken in digit-reversed order.
std::vector<Index> dct_input_order(Index n, const std::vector<Index>& radices) {
  std::vector<Index> perm = transforms::digit_reversal(radices);
  const Index half = (n + 1) / 2;
  for (Index& t : perm)
    t = t < half ? 2 * t : 2 * (n - 1 - t) + 1;
  return perm;
}

// Runs build(), which makes `who`(n) with these radices. Before any table of n (or more) values
// is made: every factor's size, complex and real, fits an index (PatternError otherwise), and
// the largest real factor's values fit in host memory (ShapeError otherwise).
template <class Build>
auto building_dct(const char* who, Index n, const std::vector<Index>& radices, Build&& build) {
  const std::vector<transforms::Stage> stages = transforms::stages_of(radices);
  Index largest = 0;
  for (std::size_t f = 0; f < stages.size(); ++f) {
    const transforms::Stage& s = stages[f];
    largest =
        std::max(largest, real_pattern({s.a, s.r, s.r, s.d}, f == 0, f + 1 == stages.size()).nnz());
  }
  return detail::allocating_host(detail::concat(who, "(", n, ")'s largest factor"), largest,
                                 "values", sizeof(Complex), std::forward<Build>(build));
}

}  // namespace

template <class T>
Product<KSChain<T>, Permutation<T>> dct(Index n, const TransformOptions& options) {
  const std::vector<Index> radices =
      transforms::radices(transforms::fourier_split(n, "dct"), options);
  return building_dct("dct", n, radices, [&] {
    const ChainValues chain = real_dct_chain(n, radices, options.normalization, false);
    return Product<KSChain<T>, Permutation<T>>(transforms::to_chain<T>(chain),
                                               Permutation<T>(dct_input_order(n, radices)));
  });
}

template <class T>
Product<Permutation<T>, KSChain<T>> inverse_dct(Index n, const TransformOptions& options) {
  const std::vector<Index> radices =
      transforms::radices(transforms::fourier_split(n, "inverse_dct"), options);
  return building_dct("inverse_dct", n, radices, [&] {
    const ChainValues chain = real_dct_chain(n, radices, options.normalization, true);
    // (chain * P)^T = P^T * chain^T, and P^T is the inverse permutation.
    return Product<Permutation<T>, KSChain<T>>(
        Permutation<T>(transforms::inverse_permutation(dct_input_order(n, radices))),
        transforms::to_chain<T>(chain).transposed_copy());
  });
}

#define STROP_INSTANTIATE(T)                                                           \
  template Product<KSChain<T>, Permutation<T>> dct<T>(Index, const TransformOptions&); \
  template Product<Permutation<T>, KSChain<T>> inverse_dct<T>(Index, const TransformOptions&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
