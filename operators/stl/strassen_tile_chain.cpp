#include <algorithm>
#include <optional>

#include "operators/stl/stl_device.hpp"
#include "operators/stl/stl_host.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/strassen_tile.hpp"

namespace strop {

template <class T>
StrassenTileChain<T>::StrassenTileChain(std::vector<StrassenTile<T>> layers) {
  require<ShapeError>(!layers.empty(), "strassen_tile_chain: needs at least one layer");
  for (std::size_t k = 0; k + 1 < layers.size(); ++k) {
    require<ShapeError>(layers[k].cols() == layers[k + 1].rows(), "strassen_tile_chain: layer ", k,
                        " (", layers[k].rows(), "x", layers[k].cols(), ") cannot multiply layer ",
                        k + 1, " (", layers[k + 1].rows(), "x", layers[k + 1].cols(), ")");
  }
  layers_ = std::make_shared<const std::vector<StrassenTile<T>>>(std::move(layers));
}

template <class T>
bool StrassenTileChain<T>::keeps_encoded(Index batch) const {
  const Index t = layers_->front().tile();
  return batch % t == 0 && std::all_of(layers_->begin(), layers_->end(),
                                       [&](const StrassenTile<T>& l) { return l.tile() == t; });
}

template <class T>
void StrassenTileChain<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                           Context& ctx) const {
  const auto& layers = *layers_;
  // An empty inner dimension: Y = beta Y, as in Product.
  if (detail::stl_chain_has_empty_inner(*this)) return detail::scale(beta, Y, ctx);
  if (!keeps_encoded(X.cols) && layers.size() > 1) {
    // Tile sizes differ, or each layer pads its last tile with zero signals: one by one.
    const bool forward = op == Op::NoTrans;
    ConstView<T> in = X;
    std::optional<TempMatrix<T>> temps[2];  // ping-pong: step k writes temps[k % 2]
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const auto& layer = forward ? layers[layers.size() - 1 - k] : layers[k];
      if (k + 1 == layers.size()) return layer.apply_unchecked(op, in, Y, alpha, beta, ctx);
      TempMatrix<T>& out = temps[k % 2].emplace(forward ? layer.rows() : layer.cols(), X.cols,
                                                layout_of(Y), X.space, ctx);
      layer.apply_unchecked(op, in, out.view, T(1), T(0), ctx);
      in = out.view;
    }
  }
  const std::vector<detail::StlSteps> stages = detail::stl_chain_stages(*this, op, X.cols);
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    return detail::stl_chain_apply_device<T>(*this, stages, X, Y, alpha, beta, ctx);
#else
    throw DeviceError("strassen_tile_chain: strop was built without CUDA; apply it to host data");
#endif
  }
  std::vector<detail::StlHostStage<T>> host;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const auto& layer = op == Op::NoTrans ? layers[layers.size() - 1 - k] : layers[k];
    host.push_back({stages[k], layer.encoded_weight().data()});
  }
  detail::stl_run_host(host, X, Y, alpha, beta);
}

template <class T>
double StrassenTileChain<T>::flops(Index batch) const {
  double total = 0;
  for (const auto& layer : *layers_)
    total += layer.flops(batch);
  return total;
}

template <class T>
Index StrassenTileChain<T>::parameter_count() const {
  Index total = 0;
  for (const auto& layer : *layers_)
    total += layer.parameter_count();
  return total;
}

template <class T>
bool StrassenTileChain<T>::acts_per_signal() const {
  return std::all_of(layers_->begin(), layers_->end(),
                     [](const StrassenTile<T>& l) { return l.acts_per_signal(); });
}

#define STROP_INSTANTIATE(T) template class StrassenTileChain<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
