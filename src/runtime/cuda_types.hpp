#pragma once
// cuBLAS/cuSOLVER spellings of strop's four scalar types (internal header, CUDA builds):
// the data and compute types of the *Ex routines, the cuComplex pointers of the typed ones,
// and a dispatch to a routine's S/D/C/Z variant.
#if STROP_HAVE_CUDA
#include <cuComplex.h>
#include <cublas_v2.h>

#include <climits>
#include <complex>
#include <type_traits>

#include "strop/core/error.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {

// The four scalar types and the 16-bit storage types (half, bfloat16).
template <class T>
cudaDataType_t cuda_data_type() {
  if constexpr (std::is_same_v<T, half>) return CUDA_R_16F;
  if constexpr (std::is_same_v<T, bfloat16>) return CUDA_R_16BF;
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  if constexpr (std::is_same_v<T, std::complex<float>>) return CUDA_C_32F;
  return CUDA_C_64F;
}

// Plain FP32 (no TF32) in single precision: the arithmetic of the CPU path and of our own
// kernels, so that device results agree with them to rounding. 16-bit storage accumulates in
// FP32 (tensor cores).
template <class T>
cublasComputeType_t cublas_compute_type() {
  if constexpr (is_reduced_precision_v<T>) {
    return CUBLAS_COMPUTE_32F;
  } else {
    return std::is_same_v<RealOf<T>, float> ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
  }
}

template <class T>
struct CudaScalarOf {
  using type = T;
};
template <>
struct CudaScalarOf<std::complex<float>> {
  using type = cuComplex;
};
template <>
struct CudaScalarOf<std::complex<double>> {
  using type = cuDoubleComplex;
};

// The same memory as the typed routines' pointer types (std::complex and cuComplex share
// their layout).
template <class T>
auto* as_cuda(T* p) {
  return reinterpret_cast<typename CudaScalarOf<T>::type*>(p);
}
template <class T>
auto* as_cuda(const T* p) {
  return reinterpret_cast<const typename CudaScalarOf<T>::type*>(p);
}

// cuBLAS and cuSOLVER take 32-bit sizes.
inline int cuda_int(Index v, const char* what) {
  require<DeviceError>(v >= 0 && v <= INT_MAX, what, " = ", v, " exceeds CUDA's 32-bit sizes");
  return static_cast<int>(v);
}

}  // namespace strop::detail

// `return S(args...)`, `D(...)`, `C(...)` or `Z(...)` for T = float, double,
// complex<float> or complex<double>.
#define STROP_CUDA_DISPATCH(T, S, D, C, Z, ...)                  \
  if constexpr (std::is_same_v<T, float>) {                      \
    return S(__VA_ARGS__);                                       \
  } else if constexpr (std::is_same_v<T, double>) {              \
    return D(__VA_ARGS__);                                       \
  } else if constexpr (std::is_same_v<T, std::complex<float>>) { \
    return C(__VA_ARGS__);                                       \
  } else {                                                       \
    return Z(__VA_ARGS__);                                       \
  }
#endif
