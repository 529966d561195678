#include "operators/transforms/chain_values.hpp"

namespace strop::transforms {

void scale(FactorValues& factor, double s) {
  for (Complex& v : factor.values)
    v *= s;
}

template <class T>
KSChain<T> to_chain(const ChainValues& chain) {
  std::vector<KSFactor<T>> factors;
  factors.reserve(chain.size());
  for (const FactorValues& f : chain) {
    std::vector<T> values(f.values.size());
    for (std::size_t e = 0; e < values.size(); ++e) {
      if constexpr (is_complex_v<T>) {
        values[e] = T(RealOf<T>(f.values[e].real()), RealOf<T>(f.values[e].imag()));
      } else {
        values[e] = T(f.values[e].real());
      }
    }
    factors.emplace_back(f.pattern, std::move(values));
  }
  return KSChain<T>(std::move(factors));
}

#define STROP_INSTANTIATE(T) template KSChain<T> to_chain<T>(const ChainValues&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::transforms
