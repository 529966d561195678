// The paper's solution matrix F = G^+ H (Lemma A.1): the optimal encoded weight of a tile
// is linear in the tile, for any fixed E_X and D, when the loss is the expected squared
// error over isotropic signals. Moments G and H: moments.hpp.
#include <Eigen/QR>

#include "factorize/stl/moments.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {

Eigen::MatrixXd solution_matrix(const Encoders& enc) {
  validate(enc);
  // G is singular when colours repeat or a decoder/encoder row vanishes; the complete
  // orthogonal decomposition then returns the minimum-norm minimiser (G^+ H), which is as
  // good as any other minimiser and keeps the encoded weights bounded.
  const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(detail::colour_gram(enc));
  return cod.solve(detail::colour_cross(enc));
}

}  // namespace strop::stl
