#pragma once
// Internal: float values rounded to nearest in half or bfloat16, as raw 16-bit words: what
// the DeviceCache<std::uint16_t> copies of an operator's 16-bit values hold (host code).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "strop/core/error.hpp"
#include "strop/core/reduced_precision.hpp"

namespace strop::detail {

// NumericalError where a finite value has no finite 16-bit neighbour (beyond half's 65504):
// an infinite weight would turn every output it touches into Inf or NaN.
template <ReducedPrecision Storage>
std::vector<std::uint16_t> rounded_words(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Storage v(values[i]);  // round to nearest
    require<NumericalError>(std::isfinite(float(v)) || !std::isfinite(values[i]),
                            "16-bit signals: the operator value ", values[i],
                            " is beyond the range of ", reduced_precision_name_v<Storage>,
                            " (use bfloat16 signals, or scale the operator)");
    std::memcpy(&out[i], &v, sizeof(v));
  }
  return out;
}

}  // namespace strop::detail
