#pragma once
// Scalar traits for the four CPU/GPU scalar types (half/bf16 storage comes with the
// tensor-core kernels). Everything in strop is templated on one of these.
#include <cmath>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace strop {

using Index = std::int64_t;

template <class T>
struct ScalarTraits;

template <>
struct ScalarTraits<float> {
  using Real = float;
  static constexpr bool is_complex = false;
  static constexpr std::string_view name = "float32";
  static constexpr float epsilon = 1.1920929e-07f;
};
template <>
struct ScalarTraits<double> {
  using Real = double;
  static constexpr bool is_complex = false;
  static constexpr std::string_view name = "float64";
  static constexpr double epsilon = 2.220446049250313e-16;
};
template <>
struct ScalarTraits<std::complex<float>> {
  using Real = float;
  static constexpr bool is_complex = true;
  static constexpr std::string_view name = "complex64";
  static constexpr float epsilon = ScalarTraits<float>::epsilon;
};
template <>
struct ScalarTraits<std::complex<double>> {
  using Real = double;
  static constexpr bool is_complex = true;
  static constexpr std::string_view name = "complex128";
  static constexpr double epsilon = ScalarTraits<double>::epsilon;
};

template <class T>
concept Scalar = requires {
  typename ScalarTraits<T>::Real;
};

template <class T>
using RealOf = typename ScalarTraits<T>::Real;

template <class T>
inline constexpr bool is_complex_v = ScalarTraits<T>::is_complex;

template <Scalar T>
T conj(T x) {
  if constexpr (is_complex_v<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

template <Scalar T>
bool is_finite(T x) {
  if constexpr (is_complex_v<T>) {
    return std::isfinite(x.real()) && std::isfinite(x.imag());
  } else {
    return std::isfinite(x);
  }
}

}  // namespace strop

// Expands MACRO(T) for the four scalar types (explicit instantiations in .cpp files).
#define STROP_FOR_EACH_SCALAR(MACRO) \
  MACRO(float)                       \
  MACRO(double)                      \
  MACRO(std::complex<float>)         \
  MACRO(std::complex<double>)
