// apply_reduced_precision: half/bfloat16 signals through a float STL operator or chain. On
// the GPU the colour GEMMs run on tensor cores (strassen_tile_cuda.cpp); on the host the
// signals are converted to float and back, the reference the GPU path is tested against.
#include <optional>

#include "operators/stl/stl_device.hpp"
#include "strop/core/buffer.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop {
namespace {

template <class Storage, class Operator>
void check_reduced(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                   float alpha, float beta) {
  const Index in_rows = op == Op::NoTrans ? A.cols() : A.rows();
  const Index out_rows = op == Op::NoTrans ? A.rows() : A.cols();
  require<ShapeError>(X.rows == in_rows && Y.rows == out_rows && Y.cols == X.cols,
                      Operator::type_name, " (reduced precision) ", A.rows(), "x", A.cols(), " as ",
                      to_string(op), " maps ", in_rows, "xB to ", out_rows, "xB, got X ", X.rows,
                      "x", X.cols, " and Y ", Y.rows, "x", Y.cols);
  require<ShapeError>(X.space == Y.space, Operator::type_name,
                      " (reduced precision): X and Y must both be in host or both in device",
                      " memory");
  require<ShapeError>(!may_overlap(X, ConstView<Storage>(Y)), Operator::type_name,
                      " (reduced precision): Y overlaps X");
  require<NumericalError>(std::isfinite(alpha) && std::isfinite(beta), Operator::type_name,
                          " (reduced precision): alpha and beta must be finite");
}

// Y = alpha op(A) X + beta Y computed in float on the host, rounded once.
template <class Storage, class Operator>
void apply_on_host(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                   float alpha, float beta, Context& ctx) {
  const HostMatrix<float> x = eigen_map(X).template cast<float>();
  HostMatrix<float> y(Y.rows, Y.cols);
  A.apply(op, view(x), view(y), alpha, 0.0f, ctx);
  auto y_out = eigen_map(Y);
  for (Index c = 0; c < Y.cols; ++c)
    for (Index r = 0; r < Y.rows; ++r)
      y_out(r, c) = Storage(beta == 0 ? y(r, c) : y(r, c) + beta * float(y_out(r, c)));
}

}  // namespace

template <class Storage>
void apply_reduced_precision(const StrassenTile<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  static_assert(is_reduced_precision_v<Storage>, "half or bfloat16 signals");
  check_reduced(A, op, X, Y, alpha, beta);
  if (Y.rows == 0 || Y.cols == 0) return;
  if (X.space == MemorySpace::Host) return apply_on_host(A, op, X, Y, alpha, beta, ctx);
#if STROP_HAVE_CUDA
  const auto steps = detail::stl_steps(A.encoders(), A.rows(), A.cols(), op, X.cols);
  detail::stl_apply_device<Storage>(A, steps, X, Y, alpha, beta, ctx);
#else
  throw DeviceError("strassen_tile: strop was built without CUDA; apply it to host data");
#endif
}

template <class Storage>
void apply_reduced_precision(const StrassenTileChain<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  static_assert(is_reduced_precision_v<Storage>, "half or bfloat16 signals");
  check_reduced(A, op, X, Y, alpha, beta);
  if (Y.rows == 0 || Y.cols == 0) return;
  if (X.space == MemorySpace::Host) return apply_on_host(A, op, X, Y, alpha, beta, ctx);
  const auto& layers = A.layers();
  if (!A.keeps_encoded(X.cols)) {
    // Layer by layer through 16-bit temporaries, as the chain's float path does.
    const bool forward = op == Op::NoTrans;
    ConstView<Storage> in = X;
    std::optional<TempMatrix<Storage>> temps[2];  // ping-pong: step k writes temps[k % 2]
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const auto& layer = forward ? layers[layers.size() - 1 - k] : layers[k];
      if (k + 1 == layers.size())
        return apply_reduced_precision<Storage>(layer, op, in, Y, alpha, beta, ctx);
      TempMatrix<Storage>& out = temps[k % 2].emplace(forward ? layer.rows() : layer.cols(), X.cols,
                                                      layout_of(Y), X.space, ctx);
      apply_reduced_precision<Storage>(layer, op, in, out.view, 1.0f, 0.0f, ctx);
      in = out.view;
    }
  }
#if STROP_HAVE_CUDA
  detail::stl_chain_apply_device<Storage>(A, detail::stl_chain_stages(A, op, X.cols), X, Y, alpha,
                                          beta, ctx);
#else
  throw DeviceError("strassen_tile_chain: strop was built without CUDA; apply it to host data");
#endif
}

#define STROP_INSTANTIATE(S)                                                                  \
  template void apply_reduced_precision<S>(const StrassenTile<float>&, Op, ConstView<S>,      \
                                           MatrixView<S>, float, float, Context&);            \
  template void apply_reduced_precision<S>(const StrassenTileChain<float>&, Op, ConstView<S>, \
                                           MatrixView<S>, float, float, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop
