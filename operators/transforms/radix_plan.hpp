#pragma once
// The radices r_1 ... r_L of a transform's chain (n = r_1 ... r_L, r_1 most significant):
// the non-power-of-two part first, then the power-of-two part split into the requested
// number of factors.
#include <vector>

#include "strop/operators/transforms.hpp"

namespace strop::transforms {

// n = odd_part * 2^stages with odd_part = 1 when n is a power of two. For Hadamard sizes the
// leading part is m in {12, 20, 28} instead (its Hadamard matrix is not a Kronecker product).
struct SizeSplit {
  Index leading = 1;
  int stages = 0;
};

// The odd part and the power of two of n >= 1 (no limit checked).
SizeSplit split_odd(Index n);

// default_transform_factors for a power-of-two part of `stages` radix-2 stages.
int default_factors(int stages);

// leading (when > 1), then 2^{g_1}, ..., 2^{g_G}: G = min(options.factors, stages) runs of
// near-equal length, larger first; factors = 0 takes default_transform_factors. At least one
// radix (n = 1 gives {1}). Refuses negative factors and unknown normalizations.
std::vector<Index> radices(const SizeSplit& split, const TransformOptions& options);

// Factor l of a chain with these radices has pattern (a, r_l, r_l, d) with a = r_1...r_{l-1}
// and d = r_{l+1}...r_L. PatternError where one's size overflows an index (a transform no
// machine holds), so that the builders check it before they allocate anything of size n.
struct Stage {
  Index a = 1;
  Index r = 1;
  Index d = 1;
};
std::vector<Stage> stages_of(const std::vector<Index>& radices);

// The mixed-radix digit reversal: perm[x] = e_1 + r_1 (e_2 + r_2 (e_3 + ...)) where
// x = (e_1, ..., e_L) in the radices, e_1 most significant. The bit reversal for radix 2.
std::vector<Index> digit_reversal(const std::vector<Index>& radices);

// q with q[p[i]] = i.
std::vector<Index> inverse_permutation(const std::vector<Index>& p);

}  // namespace strop::transforms
