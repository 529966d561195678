// apply_reduced_precision: half/bfloat16 signals through a float STL operator or chain. On
// the GPU the colour GEMMs run on tensor cores (strassen_tile_cuda.cpp); on the host the
// signals are converted to float and back, the reference the GPU path is tested against.
#include <optional>

#include "operators/stl/stl_device.hpp"
#include "runtime/reduced_apply.hpp"
#include "strop/core/buffer.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop {
template <ReducedPrecision Storage>
void apply_reduced_precision(const StrassenTile<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
#if STROP_HAVE_CUDA
  const auto steps = detail::stl_steps(A.encoders(), A.rows(), A.cols(), op, X.cols);
  detail::stl_apply_device<Storage>(A, steps, X, Y, alpha, beta, ctx);
#else
  throw DeviceError("strassen_tile: strop was built without CUDA; apply it to host data");
#endif
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const StrassenTileChain<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
  const auto& layers = A.layers();
  if (!A.keeps_encoded(X.cols) || detail::stl_chain_has_empty_inner(A)) {
    // Layer by layer through 16-bit temporaries, as the chain's float path does (each layer
    // also takes an empty extent, where the chain's device path cannot).
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
