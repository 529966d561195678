#pragma once
// Tile bookkeeping shared by the two encoded-weight fits (internal header). The weights of
// A (M x N) are W = A^T (N x M), cut into (N/t) x (M/t) tiles W_{L,J}; StrassenTile stores
// their encodings colour-major: element p (N/t)(M/t) + J (N/t) + L.
#include <vector>

#include "factorize/common/checks.hpp"
#include "strop/operators/stl_encoders.hpp"

namespace strop::stl::detail {

// NumericalError/ShapeError for a non-finite or empty A, invalid encoders, or a tile size
// that does not divide A's dimensions.
template <class T>
void require_tiled(const char* name, const HostMatrix<T>& A, const Encoders& enc) {
  strop::detail::require_finite_matrix(name, A);
  validate(enc);
  const Index t = enc.tile;
  require<ShapeError>(A.rows() % t == 0 && A.cols() % t == 0, name, ": the tile size t = ", t,
                      " must divide both dimensions of A (", A.rows(), "x", A.cols(), ")");
}

// r x (N/t)(M/t) encodings, column J (N/t) + L for tile W_{L,J}, in StrassenTile's
// colour-major order (the row-major order of this matrix).
template <class T, class Matrix>
std::vector<T> colour_major(const Matrix& encodings) {
  std::vector<T> out(static_cast<std::size_t>(encodings.size()));
  const Index columns = encodings.cols();
  for (Index p = 0; p < encodings.rows(); ++p)
    for (Index c = 0; c < columns; ++c)
      out[static_cast<std::size_t>(p * columns + c)] = T(encodings(p, c));
  return out;
}

}  // namespace strop::stl::detail
