#include "operators/transforms/fourier_chain.hpp"

#include <cmath>
#include <numbers>

#include "strop/core/error.hpp"

namespace strop::transforms {

SizeSplit fourier_split(Index n, const char* who) {
  require<PatternError>(n >= 1, who, ": n must be >= 1, got ", n);
  const SizeSplit split = split_odd(n);
  require<PatternError>(split.leading <= kMaxOddRadix, who, ": n = ", n, " = ", split.leading,
                        " * 2^", split.stages,
                        " is not supported (its odd part must be <= ", kMaxOddRadix, ")");
  return split;
}

ChainValues fourier_chain(const std::vector<Index>& radices, int sign) {
  ChainValues chain;
  for (const Stage& st : stages_of(radices)) {
    const Index s = st.r * st.d;
    // One table of the s-th roots of unity; exponents reduced exactly in integers.
    std::vector<Complex> roots(static_cast<std::size_t>(s));
    for (Index e = 0; e < s; ++e)
      roots[static_cast<std::size_t>(e)] =
          std::polar(1.0, double(sign) * 2.0 * std::numbers::pi * double(e) / double(s));
    chain.push_back(stage_factor(st.a, st.r, st.d, [&](Index k, Index l, Index j) {
      return roots[static_cast<std::size_t>((k * st.d + j) * l % s)];
    }));
  }
  return chain;
}

}  // namespace strop::transforms
