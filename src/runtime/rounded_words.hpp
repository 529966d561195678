#pragma once
// Internal: float values rounded to nearest in half or bfloat16, as raw 16-bit words: what
// the DeviceCache<std::uint16_t> copies of an operator's 16-bit values hold (host code).
#include <cstdint>
#include <cstring>
#include <vector>

#include "strop/core/reduced_precision.hpp"

namespace strop::detail {

template <ReducedPrecision Storage>
std::vector<std::uint16_t> rounded_words(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Storage v(values[i]);  // round to nearest
    std::memcpy(&out[i], &v, sizeof(v));
  }
  return out;
}

}  // namespace strop::detail
