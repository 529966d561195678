#pragma once
// Internal (CUDA sources only): consecutive weights of one row as loaded words, shared by the
// decode kernel (blr_decode.cu) and the skinny stages (blr_skinny.cu).
#include <cstdint>
#include <cstring>

#include "runtime/device_scalar.cuh"

namespace strop::detail {

// RPT consecutive weights, kept as loaded (words of 32 bits) until used, so that many
// loads can be in flight: one or two 16-byte (or one 8-byte) loads when aligned, else one
// value at a time (rows past the end read as zero).
template <class DS, int RPT>
struct WeightWords {
  static constexpr int kBytes = RPT * int(sizeof(DS));
  static_assert(kBytes == 8 || kBytes % 16 == 0, "row groups of 8 bytes or multiples of 16");
  uint32_t word[kBytes / 4];

  __device__ __forceinline__ void load_vector(const DS* p) {
    if constexpr (kBytes == 8) {
      const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
      word[0] = v.x, word[1] = v.y;
    } else {
#pragma unroll
      for (int c = 0; c < kBytes / 16; ++c) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + c);
        word[4 * c] = v.x, word[4 * c + 1] = v.y, word[4 * c + 2] = v.z, word[4 * c + 3] = v.w;
      }
    }
  }
  __device__ __forceinline__ void load(const DS* p, int rows, bool vector) {
    if (vector && rows == RPT) return load_vector(p);
    DS v[RPT];
#pragma unroll
    for (int r = 0; r < RPT; ++r)
      v[r] = r < rows ? __ldg(p + r) : DS(0.0f);
    memcpy(word, v, kBytes);
  }
  __device__ __forceinline__ float value(int r) const {
    DS v[RPT];
    memcpy(v, word, kBytes);
    return float(load_value(v + r));
  }
};

}  // namespace strop::detail
