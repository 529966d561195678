#include "strop/operators/strassen_tile.hpp"

#include <algorithm>
#include <cmath>

#include "operators/stl/stl_device.hpp"
#include "operators/stl/stl_host.hpp"
#include "operators/stl/stl_steps.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
StrassenTile<T>::StrassenTile(stl::Encoders encoders, Index rows, Index cols,
                              std::vector<T> encoded_weight) {
  stl::validate(encoders);
  const Index t = encoders.tile;
  require<ShapeError>(rows >= 0 && cols >= 0 && rows % t == 0 && cols % t == 0,
                      "strassen_tile: the tile size t = ", t, " must divide the shape ", rows, "x",
                      cols);
  // r (M/t)(N/t) can wrap for absurd shapes, and a wrapped count would let a short weight
  // vector through (every later read past its end).
  Index tile_pairs = 0, expected = 0;
  require<ShapeError>(!__builtin_mul_overflow(rows / t, cols / t, &tile_pairs) &&
                          !__builtin_mul_overflow(encoders.rank(), tile_pairs, &expected),
                      "strassen_tile: r (M/t)(N/t) overflows for rank ", encoders.rank(),
                      " and shape ", rows, "x", cols);
  require<ShapeError>(Index(encoded_weight.size()) == expected,
                      "strassen_tile: ", encoded_weight.size(),
                      " encoded weights, expected r (M/t)(N/t) = ", expected, " for rank ",
                      encoders.rank(), " and shape ", rows, "x", cols);
  detail::require_finite("strassen_tile (encoded weights)", encoded_weight.data(), expected);
  state_ =
      std::make_shared<State>(State{std::move(encoders), rows, cols, std::move(encoded_weight)});
}

template <class T>
StrassenTile<T> StrassenTile<T>::encode(const HostMatrix<T>& A, stl::Encoders encoders) {
  stl::validate(encoders);
  const Index t = encoders.tile, r = encoders.rank();
  require<ShapeError>(A.rows() % t == 0 && A.cols() % t == 0,
                      "strassen_tile: the tile size t = ", t, " must divide the shape ", A.rows(),
                      "x", A.cols());
  detail::require_finite("strassen_tile (dense weights)", A.data(), A.size());
  const Index in_tiles = A.cols() / t, out_tiles = A.rows() / t;
  // Tiles of W = A^T as columns (entry l + t j = W[L t + l, J t + j] = A[J t + j, L t + l]),
  // column L + in_tiles J; encoded = E_W tiles, one row per colour.
  HostMatrix<T> tiles(t * t, in_tiles * out_tiles);
  for (Index J = 0; J < out_tiles; ++J)
    for (Index L = 0; L < in_tiles; ++L)
      for (Index j = 0; j < t; ++j)
        for (Index l = 0; l < t; ++l)
          tiles(l + t * j, L + in_tiles * J) = A(J * t + j, L * t + l);
  const HostMatrix<T> encoded = encoders.encode_weight.cast<T>() * tiles;  // r x tiles
  std::vector<T> weights(static_cast<std::size_t>(r * in_tiles * out_tiles));
  Eigen::Map<HostMatrix<T>>(weights.data(), in_tiles * out_tiles, r) = encoded.transpose();
  return StrassenTile(std::move(encoders), A.rows(), A.cols(), std::move(weights));
}

template <class T>
void StrassenTile<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                      Context& ctx) const {
  const detail::StlSteps steps = detail::stl_steps(encoders(), rows(), cols(), op, X.cols);
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    return detail::stl_apply_device<T>(*this, steps, X, Y, alpha, beta, ctx);
#else
    throw DeviceError("strassen_tile: strop was built without CUDA; apply it to host data");
#endif
  }
  (void)ctx;
  detail::stl_run_host<T>({{steps, state_->encoded_weight.data()}}, X, Y, alpha, beta);
}

template <class T>
double StrassenTile<T>::flops(Index batch) const {
  const double t = double(tile()), r = double(rank());
  const double signal_tiles = std::ceil(double(batch) / t);
  const double in_tiles = double(cols()) / t, out_tiles = double(rows()) / t;
  const double colour_gemms = r * signal_tiles * in_tiles * out_tiles;
  const double encode_decode = r * t * t * signal_tiles * (in_tiles + out_tiles);
  return detail::flops_per_fma<T>() * (colour_gemms + encode_decode);
}

template <class T>
Index StrassenTile<T>::parameter_count() const {
  return Index(state_->encoded_weight.size()) + 3 * rank() * tile() * tile();
}

template <class T>
bool StrassenTile<T>::acts_per_signal(double tolerance) const {
  // The map of tile pair (L, J) from input tile entries (i + t l) to output tile entries
  // (i + t j) is M = sum_p Ŵ_p D_p^T E_p, linear in the r colours Ŵ_p. It acts per signal
  // iff M[(i, j), (i', l)] = δ(i, i') m(j, l). `basis` holds vec(D_p^T E_p) and `defect`
  // the part of it that violates that structure, both one row per colour, so one GEMM
  // each gives every tile pair's map and its defect.
  // NaN would compare false everywhere below and make every operator "mix signals".
  require<NumericalError>(std::isfinite(tolerance) && tolerance >= 0,
                          "strassen_tile: acts_per_signal needs a finite tolerance >= 0 (0: the",
                          " default), got ", tolerance);
  if (tolerance == 0) tolerance = 100 * double(ScalarTraits<T>::epsilon);
  const Index t = tile(), r = rank(), t2 = t * t;
  const stl::Encoders& enc = encoders();
  Eigen::MatrixXd basis(r, t2 * t2), defect(r, t2 * t2);
  for (Index p = 0; p < r; ++p) {
    const Eigen::MatrixXd m = enc.decode.row(p).transpose() * enc.encode_signal.row(p);
    Eigen::MatrixXd d = m;
    for (Index j = 0; j < t; ++j)
      for (Index l = 0; l < t; ++l) {
        double mean = 0;
        for (Index i = 0; i < t; ++i)
          mean += m(i + t * j, i + t * l) / double(t);
        for (Index i = 0; i < t; ++i)
          d(i + t * j, i + t * l) -= mean;
      }
    basis.row(p) = Eigen::Map<const Eigen::RowVectorXd>(m.data(), t2 * t2);
    defect.row(p) = Eigen::Map<const Eigen::RowVectorXd>(d.data(), t2 * t2);
  }
  // Each tile pair is judged against its own largest entry: against the largest over all
  // pairs, a pair that mixes signals at O(1) would pass next to a 1e6-scale pair.
  const Index pairs = (rows() / t) * (cols() / t);
  const T* w = state_->encoded_weight.data();
  const HostMatrix<T> basis_t = basis.cast<T>().transpose(),
                      defect_t = defect.cast<T>().transpose();
  constexpr Index chunk = 4096;
  for (Index first = 0; first < pairs; first += chunk) {
    const Index count = std::min(chunk, pairs - first);
    HostMatrix<T> colours(r, count);
    for (Index p = 0; p < r; ++p)
      for (Index k = 0; k < count; ++k)
        colours(p, k) = w[p * pairs + first + k];
    const auto largest = (basis_t * colours).cwiseAbs().colwise().maxCoeff().eval();
    const auto worst = (defect_t * colours).cwiseAbs().colwise().maxCoeff().eval();
    for (Index k = 0; k < count; ++k)
      if (double(worst(k)) > tolerance * double(largest(k))) return false;
  }
  return true;
}

#define STROP_INSTANTIATE(T) template class StrassenTile<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
