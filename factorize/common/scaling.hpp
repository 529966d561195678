#pragma once
// Power-of-two scaling of a factorization's input (internal header). Squared norms, Gram
// matrices and the SVDs' sums of squares over- or underflow long before the entries do
// (double entries of 1e-170 square to 0, float entries of 1e19 to Inf): a factorization runs
// on A / 2^exponent, whose largest entry is near 1, and multiplies the factors it finds back
// by shares of 2^exponent. Both steps are exact, so relative errors and bounds measured on
// the scaled problem hold for A.
#include <cmath>
#include <limits>

#include "strop/core/device_matrix.hpp"

namespace strop::detail {

// Entries within 2^±window of 1 (float 2^±32, double 2^±256) are left as they are: their
// squares, times any matrix size, stay far inside T's range.
template <class T>
constexpr int unit_scale_window() {
  return std::numeric_limits<RealOf<T>>::max_exponent / 4;
}

// v * 2^exponent, exact (no power of two is formed, which could itself overflow).
template <class T>
T times_power_of_two(T v, int exponent) {
  if constexpr (is_complex_v<T>) {
    return T(std::ldexp(v.real(), exponent), std::ldexp(v.imag(), exponent));
  } else {
    return std::ldexp(v, exponent);
  }
}

template <class T>
void scale_by_power_of_two(T* values, Index count, int exponent) {
  if (exponent == 0) return;
  for (Index n = 0; n < count; ++n)
    values[n] = times_power_of_two(values[n], exponent);
}

// Share `part` (0-based) of `parts` of `exponent`: integers that sum to `exponent`, so that
// each factor of a product takes about the same part of the scale.
inline int exponent_share(int exponent, int part, int parts) {
  return exponent * (part + 1) / parts - exponent * part / parts;
}

// Whether `sum_of_squares`, the squared entries of `count` values summed in T's precision
// (as the GPU's block SVD reports them), shows every entry within the window: the largest
// square is at most the sum and at least the sum / count. Overflowed or underflowed squares
// only make this fail.
template <class T>
bool squares_within_window(double sum_of_squares, Index count) {
  const int twice = 2 * unit_scale_window<T>();
  return sum_of_squares <= std::ldexp(1.0, twice) &&
         sum_of_squares >= double(count) * std::ldexp(1.0, -twice);
}

// The matrix a factorization works on: A / 2^exponent when A's largest entry is outside
// the window, A itself (exponent 0, no copy) otherwise.
template <class T>
class UnitScaled {
 public:
  // `largest`: max |a_ij|, or anything within a factor 2 of it (require_finite_matrix).
  UnitScaled(const HostMatrix<T>& A, RealOf<T> largest) : A_(A) {
    const int e = largest > 0 ? std::ilogb(largest) : 0;
    if (std::abs(e) <= unit_scale_window<T>()) return;
    exponent_ = e;
    scaled_ = A.unaryExpr([e](T v) { return times_power_of_two(v, -e); });
  }
  UnitScaled(const UnitScaled&) = delete;
  UnitScaled& operator=(const UnitScaled&) = delete;

  const HostMatrix<T>& matrix() const { return exponent_ == 0 ? A_ : scaled_; }
  // A = 2^exponent * matrix().
  int exponent() const { return exponent_; }

 private:
  const HostMatrix<T>& A_;
  int exponent_ = 0;
  HostMatrix<T> scaled_;
};

}  // namespace strop::detail
