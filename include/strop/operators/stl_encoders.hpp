#pragma once
// Encoders and decoder of a Strassen-Tile (STL) operator (Ailon, Bercovich, Weinstein), in
// the paper's convention: for t x t tiles x (signals) and w (weights),
//     vec(x w) ≈ D^T ( E_X vec(x) ⊙ E_W vec(w) ),
// vec = column-major (index i + t j), E_X, E_W, D all r x t^2 and shared by every tile.
// The rank r is the number of "colours". Exact encoders reproduce the t x t matrix
// product for every x and w: Strassen's r = 7 for t = 2 and its Kronecker square, r = 49,
// for t = 4 (corrected matrices: ../shared/papers/NOTES.md, "Strassen-Tile").
#include <Eigen/Core>
#include <random>

#include "strop/core/scalar.hpp"

namespace strop::stl {

struct Encoders {
  Index tile = 0;                 // t
  Eigen::MatrixXd encode_signal;  // E_X, r x t^2
  Eigen::MatrixXd encode_weight;  // E_W, r x t^2
  Eigen::MatrixXd decode;         // D,   r x t^2
  Index rank() const { return encode_signal.rows(); }
};

// ShapeError unless t >= 1, r >= 1 and all three matrices are r x t^2; NumericalError on
// NaN/Inf.
void validate(const Encoders& enc);

// Strassen's algorithm for 2 x 2 tiles: t = 2, r = 7.
Encoders strassen_2x2();
// The Kronecker square of Strassen's algorithm: t = 4, r = 49 (exact 4 x 4 products).
Encoders strassen_4x4();
// r distinct rows (colours) of strassen_4x4() chosen uniformly at random, the paper's
// recommended initialisation for learned t = 4 encoders. ShapeError unless 1 <= r <= 49.
Encoders rank49_subset(Index rank, std::mt19937& rng);

// Largest deviation of the encoders' bilinear map from the t x t matrix product over all
// pairs of basis tiles: 0 (up to rounding) for exact encoders.
double product_error(const Encoders& enc);
// product_error(enc) <= tolerance.
bool is_exact(const Encoders& enc, double tolerance = 1e-12);

}  // namespace strop::stl
