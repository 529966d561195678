#pragma once
// The signs of the Hadamard matrices of orders 12, 20 and 28 (the non-power-of-two parts of
// hadamard(n)), computed at compile time so that the host chain (hadamard.cpp) and the GPU
// kernel (hadamard_kernel.cu, which needs them as constants to emit plain adds and
// subtracts) use one construction. Row r is a bit mask: bit c is set where H(r, c) = -1.
//
//   m = 12, 20: Paley I with the prime q = m - 1 = 3 mod 4: H = I + [[0, 1^T], [-1, Q]], Q
//               the q x q Jacobsthal matrix Q[i][j] = chi(j - i) (chi the quadratic
//               character mod q); Q is antisymmetric, so the bracket S is skew and
//               S S^T = q I gives H H^T = (q + 1) I.
//   m = 28:     Paley II with q = 13 = 1 mod 4: the symmetric conference matrix
//               C = [[0, 1^T], [1, Q]] (C C^T = q I), then H = C ⊗ [[1, 1], [1, -1]] +
//               I ⊗ [[1, -1], [-1, -1]] of order 2 (q + 1); the cross terms cancel because C
//               is symmetric.
#include <array>
#include <cstdint>

namespace strop::detail {

inline constexpr int kMaxPaleyOrder = 28;
using HadamardRowMasks = std::array<std::uint32_t, kMaxPaleyOrder>;

// chi(x) mod the prime q: 0, +1 for a nonzero square, -1 otherwise.
constexpr int quadratic_character(int x, int q) {
  x = ((x % q) + q) % q;
  if (x == 0) return 0;
  for (int y = 1; y < q; ++y)
    if (y * y % q == x) return 1;
  return -1;
}

// Paley I of order q + 1: the sign of H(r, c).
constexpr int paley_first_sign(int q, int r, int c) {
  if (r == 0) return 1;   // first row: the diagonal 1 and the row of ones
  if (c == 0) return -1;  // first column below the diagonal: -1
  if (r == c) return 1;   // I + Q with Q's zero diagonal
  return quadratic_character(c - r, q);
}

// Paley II of order 2 (q + 1): the sign of H(r, c).
constexpr int paley_second_sign(int q, int r, int c) {
  const int i = r / 2, j = c / 2, a = r % 2, b = c % 2;
  if (i == j) return a == 0 && b == 0 ? 1 : -1;  // the [[1, -1], [-1, -1]] block
  const int conference = i == 0 || j == 0 ? 1 : quadratic_character(j - i, q);
  return a == 1 && b == 1 ? -conference : conference;  // C(i, j) [[1, 1], [1, -1]]
}

// The masks of H_m for m in {12, 20, 28} (all zero otherwise).
constexpr HadamardRowMasks paley_row_masks(int m) {
  HadamardRowMasks rows{};
  if (m != 12 && m != 20 && m != 28) return rows;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c) {
      const int sign = m == 28 ? paley_second_sign(13, r, c) : paley_first_sign(m - 1, r, c);
      if (sign < 0) rows[r] |= std::uint32_t(1) << c;
    }
  return rows;
}

}  // namespace strop::detail
