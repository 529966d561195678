#pragma once
// Device code shared by the two Walsh-Hadamard kernels (hadamard_kernel.cu and
// hadamard_mma_kernel.cu): the product of H_m (m = 12, 20, 28), or of its transpose, with m
// values held in registers, with the signs as compile-time constants so that it compiles to
// plain adds and subtracts.
#include <utility>

#include "operators/transforms/hadamard_signs.hpp"

namespace strop::detail {

// Whether (H_m or H_m^T)(R, C) = -1.
template <int M, bool Transposed, int R, int C>
struct NegativeSign {
  static constexpr HadamardRowMasks rows = paley_row_masks(M);
  static constexpr bool value = Transposed ? (rows[C] >> R & 1) : (rows[R] >> C & 1);
};

template <int M, bool Transposed, int R, int... C>
__device__ __forceinline__ float hadamard_row(const float (&v)[M],
                                              std::integer_sequence<int, C...>) {
  return (0.0f + ... + (NegativeSign<M, Transposed, R, C>::value ? -v[C] : v[C]));
}

template <int M, bool Transposed, int... R>
__device__ __forceinline__ void multiply_small(const float (&v)[M], float (&w)[M],
                                               std::integer_sequence<int, R...>) {
  ((w[R] = hadamard_row<M, Transposed, R>(v, std::make_integer_sequence<int, M>{})), ...);
}

// w = H_m v, or H_m^T v.
template <int M>
__device__ __forceinline__ void multiply_odd_digit(bool transposed, const float (&v)[M],
                                                   float (&w)[M]) {
  if (transposed) {
    multiply_small<M, true>(v, w, std::make_integer_sequence<int, M>{});
  } else {
    multiply_small<M, false>(v, w, std::make_integer_sequence<int, M>{});
  }
}

}  // namespace strop::detail
