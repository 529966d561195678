#pragma once
// KS-chain (butterfly) factorization of a dense matrix: A ≈ K_1 K_2 ... K_L for any chain
// of pairwise chainable KS patterns (papers/NOTES.md, "Butterfly / KS-chain factorization").
//
// The two-factor problem min ||W - X Y||_F with supp X ⊆ S_pi1, supp Y ⊆ S_pi2 splits into
// independent blocks solved exactly by truncated SVDs; the hierarchical driver splits the
// chain in two, solves that problem for the two fused halves, and recurses on each half.
//
//   auto f = factorize_ks_chain(A, butterfly_patterns(1024),
//                               {.column_permutation = bit_reversal_indices(1024)});
//   // A(:, q) ≈ f.chain, f.report.relative_error
#include <functional>
#include <vector>

#include "strop/factorize/report.hpp"
#include "strop/operators/ks_chain.hpp"

namespace strop {

enum class HierarchicalOrder {
  left_to_right,  // peel K_1, then K_2 from the rest, ...
  balanced,       // split the chain in the middle, recurse on both halves (default)
};

struct KSFactorizeOptions {
  HierarchicalOrder order = HierarchicalOrder::balanced;
  // true: a block SVD puts U (orthonormal columns) in the left factor and Σ V^H in the right
  // one where the left part is a single factor (every split of the left-to-right order, the
  // last splits of the balanced one), so that the rest is factorized under the true error;
  // a left part that is split again gets √Σ (an orthonormal U would hide which of its
  // directions carry weight). false: the same splits, then the factors' scales balanced:
  // each is multiplied by a power of two (the product is unchanged exactly) that brings its
  // norm within about a factor 2 of the factors' geometric mean. (√Σ on both sides of every
  // split would balance them too, but turns singular values at the noise level σ into parts
  // of size √σ that the later splits get wrong at that scale.)
  bool orthonormal = true;
  // Factorize Â(i, j) = A(row_permutation[i], column_permutation[j]) instead of A; empty
  // means the identity. The DFT needs column_permutation = bit_reversal_indices(N).
  std::vector<Index> row_permutation = {};
  std::vector<Index> column_permutation = {};
  // Measure report.relative_error (costs one dense evaluation of the chain).
  bool compute_error = true;
  Device device = Device::cpu;
};

template <class T>
struct KSFactorization {
  KSChain<T> chain;
  std::vector<Index> row_permutation;     // as in the options (empty: identity)
  std::vector<Index> column_permutation;  // as in the options (empty: identity)
  FactorReport report;
};

// A ≈ K_1 ... K_L with K_l on patterns[l]. ShapeError when the chain's shape is not A's or
// a permutation has the wrong length; PatternError when two neighbours are not chainable
// (the hierarchical algorithm needs chainable() everywhere) or a permutation repeats an
// index; NumericalError when A holds NaN/Inf. report.bound is the exact optimum for a
// chain of one or two factors; for longer chains report.lower_bound is the optimum of the
// first split, which no chain can beat.
template <class T>
KSFactorization<T> factorize_ks_chain(const HostMatrix<T>& A,
                                      const std::vector<KSPattern>& patterns,
                                      const KSFactorizeOptions& options = {},
                                      Context& ctx = default_context());

// The two-factor fixed-support problem alone, solved exactly: W ≈ X Y with X on pi1 and Y
// on pi2 (pi1 and pi2 chainable). `orthonormal` as in KSFactorizeOptions.
template <class T>
KSChain<T> factorize_two_factors(const HostMatrix<T>& W, const KSPattern& pi1, const KSPattern& pi2,
                                 bool orthonormal = true, Device device = Device::cpu,
                                 Context& ctx = default_context());

// ---- chain presets ----
// Throws PatternError naming the sizes when no chain of the family fits.
// Square dyadic butterfly of n = 2^L (same as butterfly_patterns).
std::vector<KSPattern> square_dyadic_chain(Index n);
// Monarch M x N with p blocks (same as monarch_patterns).
std::vector<KSPattern> monarch_chain(Index M, Index N, Index p);
// The most expressive chain whose parameter count fits `max_parameters`: the dense factor
// if it fits, else the chainable Monarch chain with the fewest blocks p (p | gcd(M, N)) that fits,
// else (square power-of-two N) the radix-2^k butterfly with the largest radix that fits.
std::vector<KSPattern> chain_for_budget(Index M, Index N, Index max_parameters);
// Parameters of a chain (sum of a*b*c*d).
Index chain_parameter_count(const std::vector<KSPattern>& patterns);
// The bit-reversal permutation of n = 2^k indices (FFT order), as indices.
std::vector<Index> bit_reversal_indices(Index n);

}  // namespace strop
