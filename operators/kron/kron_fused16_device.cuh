#pragma once
// Internal: device helpers shared by the 16-bit tensor-core Kron passes
// (kron_fused_pair16.cu, kron_fused_triple16.cu): factor values as 16-bit fragment pairs and
// the alpha/beta epilogue of a 16-byte piece of output.
#include <cstdint>

#include "operators/kron/kron_device.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail::kron_device {

// The factor G[q][p] as a 16-bit pair (p, p + 1) of row q (float factors, rounded).
template <class S>
__device__ __forceinline__ uint32_t factor_pair(const float* g, long long sq, long long sp, int q,
                                                int p) {
  return pack(S{}, factor_value(g, sq, sp, 0, q, p), factor_value(g, sq, sp, 0, q, p + 1));
}

// The 16 x 16 block of G at rows q0.., columns p0.. as an mma A fragment (rows q, k = p).
template <class S>
__device__ __forceinline__ void factor_a_fragment(uint32_t (&a)[4], const float* g, long long sq,
                                                  long long sp, int q0, int p0) {
  const int lane = int(threadIdx.x) & 31, q = q0 + (lane >> 2), p = p0 + 2 * (lane & 3);
  a[0] = factor_pair<S>(g, sq, sp, q, p);
  a[1] = factor_pair<S>(g, sq, sp, q + 8, p);
  a[2] = factor_pair<S>(g, sq, sp, q, p + 8);
  a[3] = factor_pair<S>(g, sq, sp, q + 8, p + 8);
}

// v = alpha v + beta *y for eight 16-bit values (y is not read when beta_zero), in fp32.
template <class S>
__device__ __forceinline__ void scale_piece(uint4& v, const uint4* y, float alpha, float beta,
                                            int beta_zero) {
  const uint4 old = beta_zero ? uint4{} : *y;
  uint32_t* out = &v.x;
  const uint32_t* prior = &old.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 acc = unpack(S{}, out[k]), y0 = unpack(S{}, prior[k]);
    float lo = alpha * acc.x, hi = alpha * acc.y;
    if (!beta_zero) {
      lo += beta * y0.x;
      hi += beta * y0.y;
    }
    out[k] = pack(S{}, lo, hi);
  }
}

}  // namespace strop::detail::kron_device
