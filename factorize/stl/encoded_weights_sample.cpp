// Encoded weights by least squares on a sample of signals: min ||A X - STL(X)||_F over Ŵ.
//
// For a tile I of t signals, the X_p = X^T convention of StrassenTile gives the output tile
//     vec(Y^T_{I,J}) = sum_L D^T diag(e_{I,L}) Ŵ_{L,J},   e_{I,L} = E_X vec(X^T_{I,L}),
// linear in the stacked unknowns ŵ_J = (Ŵ_{0,J}, ..., Ŵ_{N/t-1,J}) with the design matrix
// Z_I = [D^T diag(e_{I,L})]_L (t^2 x (N/t) r), the same for every output tile J. So the
// normal matrix is shared by all J:
//     (sum_I Z_I^H Z_I)[(L,p), (L',q)] = (D D^T)[p,q] · sum_I conj(e_{I,L,p}) e_{I,L',q},
// the Gram matrix of the encoded signals Hadamard-multiplied by D D^T in every r x r
// block; the right-hand sides are sum_I Z_I^H vec(Y^T_{I,J}), entry (L,p) =
// sum_I conj(e_{I,L,p}) (D vec(Y^T_{I,J}))_p. One factorisation, M/t right-hand sides.
#include <Eigen/Cholesky>
#include <algorithm>
#include <complex>
#include <type_traits>

#include "factorize/stl/tiles.hpp"
#include "strop/factorize/stl.hpp"

namespace strop::stl {
namespace {

// Normal equations square the condition number: form and solve them in double precision
// whatever T is.
template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

constexpr Index max_unknowns = 8192;  // a 512 MiB (double) normal matrix, factored densely

}  // namespace

template <class T>
StrassenTile<T> fit_encoded_weights(const HostMatrix<T>& A, const Encoders& enc,
                                    const HostMatrix<T>& sample) {
  constexpr const char* name = "fit_encoded_weights";
  detail::require_tiled(name, A, enc);
  require<ShapeError>(sample.rows() == A.cols(), name, ": the sample has ", sample.rows(),
                      " rows (features), A has ", A.cols(), " columns");
  strop::detail::require_finite_matrix("fit_encoded_weights (sample)", sample);
  const Index t = enc.tile, r = enc.rank(), tiles_in = A.cols() / t, tiles_out = A.rows() / t;
  const Index unknowns = tiles_in * r;
  require<ShapeError>(unknowns <= max_unknowns, name, ": (N/t) r = ", tiles_in, " * ", r, " = ",
                      unknowns, " unknowns per output tile exceed ", max_unknowns,
                      ": the normal matrix is too big to factor densely");

  using W = Wide<T>;
  using Matrix = HostMatrix<W>;
  const Index signals = sample.cols(), groups = (signals + t - 1) / t;
  const Matrix x = sample.template cast<W>();
  const Matrix y = A.template cast<W>() * x;
  const Matrix encode = enc.encode_signal.cast<W>(), decode = enc.decode.cast<W>();

  // Column I: e_{I,0}, e_{I,1}, ... stacked, for the full tiles of signals; a last partial
  // tile is kept apart (`partial`): its missing signals are zero signals whose outputs
  // are not part of the sample, so only its first `remainder` rows of each output tile count.
  const Index full = signals / t, remainder = signals % t;
  Matrix encoded(unknowns, full);
  Eigen::Matrix<W, Eigen::Dynamic, 1> partial;
  Matrix rhs = Matrix::Zero(unknowns, tiles_out);
  Matrix in_tiles(t * t, tiles_in), out_tiles(t * t, tiles_out);
  for (Index I = 0; I < groups; ++I) {
    in_tiles.setZero();
    out_tiles.setZero();
    for (Index i = 0; i < t && I * t + i < signals; ++i) {
      const Index s = I * t + i;
      for (Index L = 0; L < tiles_in; ++L)
        for (Index a = 0; a < t; ++a)
          in_tiles(i + t * a, L) = x(L * t + a, s);  // X^T_{I,L}(i, a) = X(L t + a, I t + i)
      for (Index J = 0; J < tiles_out; ++J)
        for (Index b = 0; b < t; ++b)
          out_tiles(i + t * b, J) = y(J * t + b, s);
    }
    const Matrix e = encode * in_tiles;  // r x N/t: column L is e_{I,L}
    // r x M/t: column J is D vec(Y^T_{I,J}); rows of missing signals are zero in out_tiles,
    // so this is already the masked D P vec(Y^T_{I,J}) of a partial tile.
    const Matrix u = decode * out_tiles;
    const Eigen::Map<const Eigen::Matrix<W, Eigen::Dynamic, 1>> stacked(e.data(), unknowns);
    if (I < full) {
      encoded.col(I) = stacked;
    } else {
      partial = stacked;
    }
    for (Index L = 0; L < tiles_in; ++L)
      rhs.middleRows(L * r, r) += e.col(L).conjugate().asDiagonal() * u;
  }

  // The Gram matrix of the encoded signals, times D D^T in every r x r block (D P D^T for
  // the partial tile, P selecting the output rows of its present signals).
  const auto build_normal = [&](Matrix& normal) {
    normal.setZero(unknowns, unknowns);
    if (full > 0) normal.template selfadjointView<Eigen::Lower>().rankUpdate(encoded.conjugate());
    normal = normal.template selfadjointView<Eigen::Lower>();
    const Matrix colour = (enc.decode * enc.decode.transpose()).cast<W>();
    for (Index L = 0; L < tiles_in; ++L)
      for (Index K = 0; K < tiles_in; ++K)
        normal.block(L * r, K * r, r, r).array() *= colour.array();
    if (remainder > 0) {
      Eigen::MatrixXd masked = Eigen::MatrixXd::Zero(r, t * t);
      for (Index i = 0; i < remainder; ++i)
        for (Index b = 0; b < t; ++b)
          masked.col(i + t * b) = enc.decode.col(i + t * b);
      const Matrix partial_colour = (masked * enc.decode.transpose()).cast<W>();
      for (Index col = 0; col < unknowns; ++col)
        for (Index row = 0; row < unknowns; ++row)
          normal(row, col) +=
              strop::conj(partial(row)) * partial(col) * partial_colour(row % r, col % r);
    }
  };

  // A sample with fewer independent directions than unknowns (or repeated colours) leaves
  // the normal matrix singular, and rounding can make a nearly singular one indefinite: a
  // ridge of 1e-10 times the mean diagonal keeps the Cholesky factorisation finite. Its
  // bias is then removed where the data determine the solution by iterated Tikhonov,
  // x_{k+1} = x_0 + ridge (N + ridge)^{-1} x_k (each step shrinks the bias of an
  // eigen-direction with eigenvalue μ by ridge / (μ + ridge)), while directions the data
  // do not determine stay near zero (a near minimum-norm solution). The factorisation is
  // in place (the normal matrix can be 8192^2); if rounding still defeats it, the matrix is
  // rebuilt and factored with a 1000x larger ridge.
  Matrix normal;
  build_normal(normal);
  const double mean_diagonal = std::max(normal.diagonal().real().mean(), 1e-300);
  double ridge = 1e-10 * mean_diagonal;
  Matrix solution;
  for (int attempt = 0;; ++attempt) {
    normal.diagonal().array() += W(ridge);
    const Eigen::LLT<Eigen::Ref<Matrix>> llt(normal);
    if (llt.info() == Eigen::Success) {
      const Matrix first = llt.solve(rhs);
      solution = first;
      for (int step = 0; step < 3; ++step)
        solution = first + W(ridge) * llt.solve(solution);
      break;
    }
    require<NumericalError>(attempt < 2, name,
                            ": the normal equations could not be factored (ridge ", ridge, ")");
    build_normal(normal);
    ridge *= 1e3;
  }
  require<NumericalError>(solution.allFinite(), name, ": the least-squares solution is not finite");

  // Row L r + p, column J -> colour p of tile (L, J): column J (N/t) + L of a r x tiles matrix.
  HostMatrix<T> encodings(r, tiles_in * tiles_out);
  for (Index J = 0; J < tiles_out; ++J)
    for (Index L = 0; L < tiles_in; ++L)
      for (Index p = 0; p < r; ++p)
        encodings(p, J * tiles_in + L) = static_cast<T>(solution(L * r + p, J));
  return StrassenTile<T>(enc, A.rows(), A.cols(), detail::colour_major<T>(encodings));
}

#define STROP_INSTANTIATE(T)                                                          \
  template StrassenTile<T> fit_encoded_weights(const HostMatrix<T>&, const Encoders&, \
                                               const HostMatrix<T>&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE

}  // namespace strop::stl
