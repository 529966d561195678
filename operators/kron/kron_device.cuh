#pragma once
// Internal: device helpers shared by the Kron-matmul kernels (kron_kernels.cu,
// kron_fused_square.cu).
#include <cuda_pipeline.h>

#include "runtime/device_scalar.cuh"

namespace strop::detail::kron_device {

template <class D>
__device__ __forceinline__ D unit() {
  return D(1);
}
template <>
__device__ __forceinline__ DeviceComplex<float> unit() {
  return {1.0f, 0.0f};
}
template <>
__device__ __forceinline__ DeviceComplex<double> unit() {
  return {1.0, 0.0};
}

// Reads G[q][p] (or the identity when g is null), conjugated on request.
template <class D>
__device__ __forceinline__ D factor_value(const D* g, long long sq, long long sp, int conj,
                                          long long q, long long p) {
  if (g == nullptr) return p == q ? unit<D>() : D{};
  const D v = g[q * sq + p * sp];
  return conj ? conjugate(v) : v;
}

// Global -> shared copy that does not go through registers (cp.async): a thread issues all
// of its tile's loads before waiting for any, so the load phase is bound by bandwidth, not
// by one memory latency per element.
template <class D>
__device__ __forceinline__ void copy_async(D* dst, const D* src) {
  __pipeline_memcpy_async(dst, src, sizeof(D));
}

template <class D>
__device__ __forceinline__ D epilogue(D acc, D* y, int scale, int beta_zero, D alpha, D beta) {
  if (!scale) return acc;
  D v = mul(alpha, acc);
  if (!beta_zero) v = add(v, mul(beta, *y));
  return v;
}

// One padding element every 128 bytes (a bank's width times 32): a warp reading elements P
// apart (one slice each) then spreads over all banks. i >= 0, so the division is unsigned:
// a shift, without the fix-up for negative values that int division needs.
template <class D>
__host__ __device__ __forceinline__ constexpr int padded(int i) {
  constexpr unsigned every = 128 / unsigned(sizeof(D));
  return i + int(unsigned(i) / every);
}

}  // namespace strop::detail::kron_device
