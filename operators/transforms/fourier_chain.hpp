#pragma once
// The mixed-radix Cooley-Tukey chain shared by the DFT and the DCT.
#include "operators/transforms/chain_values.hpp"
#include "operators/transforms/radix_plan.hpp"

namespace strop::transforms {

// n split for dft/dct; PatternError naming `who` and n when n < 1 or its odd part exceeds
// kMaxOddRadix.
SizeSplit fourier_split(Index n, const char* who);

// Decimation in time with radices r_1 ... r_L: F_n = chain * digit_reversal, where factor l
// (pattern (a, r, r, d), block size s = r d) holds w[i, k, l, j] = exp(sign 2 pi i (k d + j) l /
// s): the radix-r DFT times the twiddles of its column (F_p ⊗ I_q) T (I_p ⊗ F_q) L, applied
// recursively. sign = -1 is the forward DFT, +1 the conjugate one. Unscaled.
ChainValues fourier_chain(const std::vector<Index>& radices, int sign);

}  // namespace strop::transforms
