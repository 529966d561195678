#pragma once
// The two moment matrices of the STL least-squares problems for isotropic signals
// (internal header). For x with iid zero-mean unit-variance entries and x̃ = vec x, the
// encoded product D^T(E_X x̃ ⊙ ŵ) is Z ŵ with Z = D^T diag(E_X x̃), and
//     E[Z^H Z]            = G = (D D^T) ⊙ (E_X E_X^T)                    (r x r),
//     E[Z^H vec(x w)]     = H vec(w),  H[p, a + t b] = sum_i E_X[p, i + t a] D[p, i + t b],
// the latter because vec(x w) = (w^T ⊗ I_t) x̃, so that its p-th entry is
// E[(E_X x̃)_p (D (w^T ⊗ I) x̃)_p] = row_p(E_X) · row_p(D (w^T ⊗ I)). In t x t form, with
// ex_p and d_p row p of E_X and D reshaped column-major: H_p = ex_p^T d_p.
#include <Eigen/Core>

#include "strop/operators/stl_encoders.hpp"

namespace strop::stl::detail {

inline Eigen::MatrixXd colour_gram(const Encoders& enc) {
  return (enc.decode * enc.decode.transpose())
      .cwiseProduct(enc.encode_signal * enc.encode_signal.transpose());
}

// Row p of a r x t^2 matrix as the t x t tile it encodes (column-major vec).
inline Eigen::MatrixXd row_tile(const Eigen::MatrixXd& m, Index p, Index t) {
  const Eigen::VectorXd row = m.row(p).transpose();
  return Eigen::Map<const Eigen::MatrixXd>(row.data(), t, t);
}

inline Eigen::MatrixXd colour_cross(const Encoders& enc) {
  const Index t = enc.tile, r = enc.rank();
  Eigen::MatrixXd h(r, t * t);
  for (Index p = 0; p < r; ++p) {
    const Eigen::MatrixXd tile =
        row_tile(enc.encode_signal, p, t).transpose() * row_tile(enc.decode, p, t);
    h.row(p) = Eigen::Map<const Eigen::RowVectorXd>(tile.data(), t * t);
  }
  return h;
}

}  // namespace strop::stl::detail
