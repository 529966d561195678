// Encoded weights for isotropic signals: one solution matrix F for every tile (Lemma A.1),
// Ŵ_{L,J} = F vec(W_{L,J}). Signals with iid zero-mean entries make the errors of different
// input tiles L uncorrelated, so the per-tile optimum is the optimum of the whole operator.
#include "factorize/stl/tiles.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {

template <class T>
StrassenTile<T> fit_encoded_weights(const HostMatrix<T>& A, const Encoders& enc) {
  detail::require_tiled("fit_encoded_weights", A, enc);
  const Index t = enc.tile, tiles_in = A.cols() / t, tiles_out = A.rows() / t;
  // Column J (N/t) + L holds vec(W_{L,J}): W_{L,J}(a, b) = W(L t + a, J t + b) = A(J t + b, L t +
  // a).
  HostMatrix<T> weights(t * t, tiles_in * tiles_out);
  for (Index J = 0; J < tiles_out; ++J)
    for (Index L = 0; L < tiles_in; ++L)
      for (Index b = 0; b < t; ++b)
        for (Index a = 0; a < t; ++a)
          weights(a + t * b, J * tiles_in + L) = A(J * t + b, L * t + a);
  // F is real, so complex weights encode their real and imaginary parts alike (for complex
  // isotropic signals, E[x̄ x^T] = I gives the same G and H).
  const HostMatrix<T> encoded = solution_matrix(enc).template cast<T>() * weights;
  return StrassenTile<T>(enc, A.rows(), A.cols(), detail::colour_major<T>(encoded));
}

#define STROP_INSTANTIATE(T) \
  template StrassenTile<T> fit_encoded_weights(const HostMatrix<T>&, const Encoders&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE

}  // namespace strop::stl
