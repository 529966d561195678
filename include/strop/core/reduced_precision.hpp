#pragma once
// Reduced-precision storage types for GPU signals (DESIGN.md section 1): 16-bit IEEE half and
// bfloat16, stored as Eigen's types (the same bits as CUDA's __half and __nv_bfloat16), so
// that host matrices of them exist for uploads and CPU references. Arithmetic on them runs in
// fp32: kernels accumulate in float, the CPU reference converts to float.
#include <type_traits>

#include "strop/core/scalar.hpp"
#ifdef __CUDACC__
// CUDA sources only name the types (their kernels use __half and __nv_bfloat16); Eigen's
// headers do not compile warning-free under nvcc.
namespace Eigen {
struct half;
struct bfloat16;
}  // namespace Eigen
#else
#include <Eigen/Core>
#endif

namespace strop {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

template <class T>
inline constexpr bool is_reduced_precision_v =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <class T>
concept ReducedPrecision = is_reduced_precision_v<T>;

// Real storage: code shared with the four scalar types may ask.
template <>
inline constexpr bool is_complex_v<half> = false;
template <>
inline constexpr bool is_complex_v<bfloat16> = false;

// The scalar of alpha, beta and the accumulation for signals stored as T: float for 16-bit
// storage, T itself otherwise.
template <class T>
using ComputeScalar = std::conditional_t<is_reduced_precision_v<T>, float, T>;

// The storage's name in messages and tuning keys.
template <ReducedPrecision T>
inline constexpr const char* reduced_precision_name_v =
    std::is_same_v<T, half> ? "half" : "bfloat16";

// Unit roundoff of the storage (half: 2^-11, bfloat16: 2^-8).
template <ReducedPrecision T>
inline constexpr double unit_roundoff_v = std::is_same_v<T, half> ? 1.0 / 2048 : 1.0 / 256;

}  // namespace strop
