// Hadamard transforms as chains: H_{r_1} ⊗ ... ⊗ H_{r_L}, factor l being
// I ⊗ H_{r_l} ⊗ I (NOTES.md: a Kronecker product is a KS chain with repeated values). These
// factors act on different digits and commute, so H^T is the same chain of transposed blocks.
#include <bit>
#include <cmath>

#include "operators/transforms/chain_values.hpp"
#include "operators/transforms/radix_plan.hpp"
#include "strop/core/error.hpp"
#include "strop/operators/transforms.hpp"

namespace strop {
namespace {

using transforms::ChainValues;
using Signs = HostMatrix<double>;

// chi(x): the quadratic character modulo the prime q (0, +1 for residues, -1 otherwise).
std::vector<double> quadratic_character(Index q) {
  std::vector<double> chi(static_cast<std::size_t>(q), -1.0);
  chi[0] = 0.0;
  for (Index x = 1; x < q; ++x)
    chi[static_cast<std::size_t>(x * x % q)] = 1.0;
  return chi;
}

// The q x q Jacobsthal matrix Q[i][j] = chi(j - i).
Signs jacobsthal(Index q) {
  const std::vector<double> chi = quadratic_character(q);
  Signs Q(q, q);
  for (Index i = 0; i < q; ++i)
    for (Index j = 0; j < q; ++j)
      Q(i, j) = chi[static_cast<std::size_t>(((j - i) % q + q) % q)];
  return Q;
}

// Paley I, prime q = 3 mod 4: H = I + [[0, 1^T], [-1, Q]] of order q + 1 (Q is
// antisymmetric, so the bracket S is skew and S S^T = q I gives H H^T = (q + 1) I).
Signs paley_first(Index q) {
  Signs h = Signs::Identity(q + 1, q + 1);
  h.block(0, 1, 1, q).array() += 1.0;
  h.block(1, 0, q, 1).array() -= 1.0;
  h.block(1, 1, q, q) += jacobsthal(q);
  return h;
}

// Paley II, prime q = 1 mod 4: the symmetric conference matrix C = [[0, 1^T], [1, Q]]
// (C C^T = q I), then H = C ⊗ [[1, 1], [1, -1]] + I ⊗ [[1, -1], [-1, -1]] of order
// 2 (q + 1); the cross terms cancel because C is symmetric.
Signs paley_second(Index q) {
  Signs c = Signs::Zero(q + 1, q + 1);
  c.block(0, 1, 1, q).setOnes();
  c.block(1, 0, q, 1).setOnes();
  c.block(1, 1, q, q) = jacobsthal(q);
  Signs a(2, 2), b(2, 2);
  a << 1, 1, 1, -1;
  b << 1, -1, -1, -1;
  Signs h(2 * (q + 1), 2 * (q + 1));
  for (Index i = 0; i <= q; ++i)
    for (Index j = 0; j <= q; ++j)
      h.block(2 * i, 2 * j, 2, 2) = c(i, j) * a + (i == j ? b : Signs::Zero(2, 2));
  return h;
}

Signs hadamard_signs(Index m) {
  if (m >= 1 && (m & (m - 1)) == 0) {
    Signs h(m, m);
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < m; ++j)
        h(i, j) = std::popcount(static_cast<std::uint64_t>(i & j)) % 2 ? -1.0 : 1.0;
    return h;
  }
  if (m == 12) return paley_first(11);
  if (m == 20) return paley_first(19);
  if (m == 28) return paley_second(13);
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
KSChain<T> hadamard_chain(Index n, const TransformOptions& options, bool inverse) {
  const transforms::SizeSplit split = hadamard_split(n);
  ChainValues chain;
  for (const transforms::Stage& s :
       transforms::stages_of(transforms::radices(split, options.factors))) {
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
  return transforms::to_chain<T>(chain);
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
  return hadamard_signs(m).cast<T>();
}

#define STROP_INSTANTIATE(T)                                               \
  template KSChain<T> hadamard<T>(Index, const TransformOptions&);         \
  template KSChain<T> inverse_hadamard<T>(Index, const TransformOptions&); \
  template HostMatrix<T> small_hadamard_matrix<T>(Index);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
