#pragma once
// Device-side arithmetic for the four scalar types. std::complex<R> is passed to kernels
// as DeviceComplex<R>, which has the same layout (two R, real first).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <complex>
#include <cstring>

#include "strop/core/reduced_precision.hpp"

namespace strop::detail {

template <class R>
struct alignas(2 * sizeof(R)) DeviceComplex {
  R re, im;
};

template <class T>
struct DeviceScalarOf {
  using type = T;
};
template <class R>
struct DeviceScalarOf<std::complex<R>> {
  using type = DeviceComplex<R>;
};
// half and bfloat16 storage (strop/core/reduced_precision.hpp) is CUDA's __half and
// __nv_bfloat16, the same 16 bits.
template <>
struct DeviceScalarOf<half> {
  using type = __half;
};
template <>
struct DeviceScalarOf<bfloat16> {
  using type = __nv_bfloat16;
};
template <class T>
using DeviceScalar = typename DeviceScalarOf<T>::type;

// Host value -> device value of the same bits.
template <class T>
DeviceScalar<T> to_device_scalar(T v) {
  DeviceScalar<T> d;
  std::memcpy(&d, &v, sizeof(T));
  return d;
}

// Loads and stores of storage values: 16-bit storage is read as and written from float
// (rounded to nearest), the other types as themselves.
template <class D>
__device__ __forceinline__ D load_value(const D* p) {
  return *p;
}
__device__ __forceinline__ float load_value(const __half* p) {
  return __half2float(*p);
}
__device__ __forceinline__ float load_value(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}
template <class D>
__device__ __forceinline__ void store_value(D* p, D v) {
  *p = v;
}
__device__ __forceinline__ void store_value(__half* p, float v) {
  *p = __float2half_rn(v);
}
__device__ __forceinline__ void store_value(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

template <class R>
__device__ __forceinline__ R conjugate(R a) {
  return a;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> conjugate(DeviceComplex<R> a) {
  return {a.re, -a.im};
}
template <class R>
__device__ __forceinline__ R mul(R a, R b) {
  return a * b;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> mul(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R>
__device__ __forceinline__ R add(R a, R b) {
  return a + b;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> add(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
// acc += a * b
template <class R>
__device__ __forceinline__ void multiply_add(R& acc, R a, R b) {
  acc = fma(a, b, acc);
}
template <class R>
__device__ __forceinline__ void multiply_add(DeviceComplex<R>& acc, DeviceComplex<R> a,
                                             DeviceComplex<R> b) {
  acc.re = fma(a.re, b.re, fma(-a.im, b.im, acc.re));
  acc.im = fma(a.re, b.im, fma(a.im, b.re, acc.im));
}
// Element e of a rows x cols view, counted in the memory order of a view with row stride
// row_stride (column-major when it is 1), so consecutive threads touch adjacent memory.
struct ElementIndex {
  long long row, col;
};
__device__ __forceinline__ ElementIndex element_in_memory_order(long long e, long long rows,
                                                                long long cols,
                                                                long long row_stride) {
  if (row_stride == 1) return {e % rows, e / rows};
  return {e / cols, e % cols};
}

// The value of lane (lane ^ mask) of a full warp (both parts of a complex value).
template <class R>
__device__ __forceinline__ R shfl_xor(R v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> shfl_xor(DeviceComplex<R> v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.re, mask), __shfl_xor_sync(0xffffffffu, v.im, mask)};
}

template <class R>
__device__ __forceinline__ bool is_zero(R a) {
  return a == R(0);
}
template <class R>
__device__ __forceinline__ bool is_zero(DeviceComplex<R> a) {
  return a.re == R(0) && a.im == R(0);
}

}  // namespace strop::detail
