// Chain presets: named families of KS chains and a chooser from a parameter budget.
#include <numeric>

#include "strop/core/error.hpp"
#include "strop/factorize/butterfly.hpp"

namespace strop {
namespace {

bool is_power_of_two(Index n) {
  return n >= 1 && (n & (n - 1)) == 0;
}

Index log2_exact(Index n) {
  Index levels = 0;
  while ((Index(1) << levels) < n)
    ++levels;
  return levels;
}

// Square dyadic chain of n = 2^L whose factors have 2^k x 2^k blocks (the last one takes
// the remaining levels): radix 2 is the butterfly, radix n the dense matrix.
std::vector<KSPattern> radix_chain(Index n, Index k) {
  const Index levels = log2_exact(n);
  std::vector<KSPattern> chain;
  for (Index done = 0; done < levels;) {
    const Index step = std::min(k, levels - done);
    chain.push_back(
        {Index(1) << done, Index(1) << step, Index(1) << step, Index(1) << (levels - done - step)});
    done += step;
  }
  return chain;
}

// Whether the chain has at most `budget` parameters, never forming a count that overflows
// Index: the chains of a 2^32 x 2^32 matrix have up to 2^64 (which wrapped to 0 and "fit").
bool fits_budget(const std::vector<KSPattern>& chain, Index budget) {
  Index left = budget;
  for (const KSPattern& p : chain) {
    Index nnz = 1;
    for (Index extent : {p.a, p.b, p.c, p.d}) {
      if (extent > left / nnz) return false;  // nnz * extent > left
      nnz *= extent;
    }
    left -= nnz;
  }
  return true;
}

}  // namespace

std::vector<KSPattern> square_dyadic_chain(Index n) {
  return butterfly_patterns(n);
}

std::vector<KSPattern> monarch_chain(Index M, Index N, Index p) {
  return monarch_patterns(M, N, p);
}

Index chain_parameter_count(const std::vector<KSPattern>& patterns) {
  Index total = 0;
  for (const KSPattern& p : patterns)
    total += p.nnz();
  return total;
}

std::vector<KSPattern> chain_for_budget(Index M, Index N, Index max_parameters) {
  require<PatternError>(M >= 1 && N >= 1, "chain_for_budget: sizes must be >= 1, got ", M, "x", N);
  // (The presets refuse a pattern whose nonzero count overflows an index: such a chain fits
  // no budget, so the dense count is compared before the pattern is made.)
  if (M <= max_parameters / N) return dense_patterns(M, N);
  // More Monarch blocks means fewer parameters: the first p that fits keeps the most. The
  // two Monarch factors are chainable only when p^2 divides min(M, N), so p stops at its
  // square root (not at gcd(M, N): 2^32 iterations for M = N = 2^32).
  const Index g = std::gcd(M, N);
  for (Index p = 2; p <= g && p <= std::min(M, N) / p; ++p) {
    if (g % p != 0) continue;
    std::vector<KSPattern> chain;
    try {
      chain = monarch_patterns(M, N, p);
    } catch (const PatternError&) {
      continue;  // more nonzeros than an index counts: over any budget
    }
    if (chainable(chain[0], chain[1]) && fits_budget(chain, max_parameters)) return chain;
  }
  if (M == N && is_power_of_two(N) && N >= 2) {
    for (Index k = log2_exact(N); k >= 1; --k) {
      auto chain = radix_chain(N, k);
      if (fits_budget(chain, max_parameters)) return chain;
    }
  }
  throw PatternError(detail::concat("chain_for_budget: no Monarch or butterfly chain of a ", M, "x",
                                    N, " matrix fits in ", max_parameters,
                                    " parameters (the square dyadic butterfly of a power-of-two "
                                    "size is the smallest)"));
}

std::vector<Index> bit_reversal_indices(Index n) {
  require<PatternError>(is_power_of_two(n), "bit_reversal_indices: n must be a power of two, got ",
                        n);
  const Index levels = log2_exact(n);
  std::vector<Index> perm(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    Index r = 0;
    for (Index b = 0; b < levels; ++b)
      if (i & (Index(1) << b)) r |= Index(1) << (levels - 1 - b);
    perm[static_cast<std::size_t>(i)] = r;
  }
  return perm;
}

}  // namespace strop
