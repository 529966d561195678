#pragma once
// StrassenTile<T>: a Strassen-Tile (STL) operator A (M x N), the learned tiled bilinear
// layer of Ailon, Bercovich and Weinstein, in our column-signal convention.
//
// The paper computes Y_p = STL(X_p, W) for X_p (n x k, n tokens) and W (k x m). Our
// signals are columns, so with X (N x B) we set X_p = X^T, W = A^T (k = N, m = M, n = B):
// for every tile I of t signals, tile L of t input features and tile J of t outputs,
//     vec(Y^T_{I,J}) = D^T sum_L ( E_X vec(X^T_{I,L}) ⊙ Ŵ_{L,J} ),
// with Ŵ_{L,J} (r values, "encoded weights") and E_X, D from stl::Encoders. Computed as
// r "colour" GEMMs of (B/t x N/t) (N/t x M/t) between the encode and decode steps.
//
// STL mixes the t signals of a tile: it is linear in the whole batch, not one column at a
// time. A final partial tile of signals (B not a multiple of t) is padded with zero signals.
// A^T and A^H apply the adjoint of that batch-linear map (the backward pass), which is
// again an STL map (E_X and D swap roles, Ŵ^(p) transposed). to_dense() throws unless the
// operator acts on each signal separately, e.g. exact encoders with Ŵ = E_W vec(W).
#include <memory>
#include <random>
#include <vector>

#include "strop/core/lazy.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"
#include "strop/operators/stl_encoders.hpp"

namespace strop {

template <class T>
class StrassenTile : public OperatorBase<StrassenTile<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "strassen_tile";

  // encoded_weight: r colour blocks, block p the (N/t) x (M/t) column-major matrix Ŵ^(p)
  // with Ŵ^(p)(L, J) = Ŵ_{L,J}[p], i.e. element p (N/t)(M/t) + J (N/t) + L.
  // ShapeError unless t divides rows and cols and the sizes match; NumericalError on NaN/Inf.
  StrassenTile(stl::Encoders encoders, Index rows, Index cols, std::vector<T> encoded_weight);
  // Encodes the weights of the dense A (W = A^T) with E_W: Ŵ_{L,J} = E_W vec(W_{L,J}).
  // Exact (to_dense() == A up to rounding) when the encoders are. With inexact encoders
  // (a random subset of the rank-49 rows, say) this is no approximation of A: fit with
  // stl::fit_encoded_weights (strop/factorize/stl.hpp) instead.
  static StrassenTile encode(const HostMatrix<T>& A, stl::Encoders encoders);

  Index rows() const { return state_->rows; }
  Index cols() const { return state_->cols; }
  Index tile() const { return state_->encoders.tile; }
  Index rank() const { return state_->encoders.rank(); }
  const stl::Encoders& encoders() const { return state_->encoders; }
  const std::vector<T>& encoded_weight() const { return state_->encoded_weight; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  // Colour GEMMs plus encode and decode (dense encoders: 2 r t^2 per tile each way).
  double flops(Index batch) const;
  // Encoded weights plus the three shared r x t^2 matrices.
  Index parameter_count() const;

  // True when every tile map mixes no signals (then A has a dense matrix, and to_dense()
  // works): checked per tile pair to `tolerance` relative to the tile map's largest entry
  // (0: the default, 100 epsilon of T; NaN, Inf or a negative tolerance is a NumericalError).
  bool acts_per_signal(double tolerance = 0) const;

  // Device copies (colour-major Ŵ, encoders as T), made on first GPU use.
  struct DeviceForm;
  const DeviceForm& device_form(Context& ctx) const;

 private:
  struct State {
    stl::Encoders encoders;
    Index rows = 0, cols = 0;
    std::vector<T> encoded_weight;
  };
  std::shared_ptr<const State> state_;
  std::shared_ptr<Lazy<std::shared_ptr<DeviceForm>>> device_ =
      std::make_shared<Lazy<std::shared_ptr<DeviceForm>>>();
};

// StrassenTileChain<T>: the product A_1 A_2 ... A_L of Strassen-Tile layers (A_L applied
// first) with the activations kept encoded between layers (the paper's Algorithm 2): one
// encode, the layers' colour GEMMs joined by the fused decode-encode of each tile pair's
// colours (an r_{l+1} x r_l mixing, E_X D^T), one decode. It equals applying the layers one
// by one, which it does when the layers' tile sizes differ or the batch is not a multiple of
// t (each layer pads its last tile with zero signals). Products of STL operators join one
// chain at compile time (A * B below).
template <class T>
class StrassenTileChain : public OperatorBase<StrassenTileChain<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "strassen_tile_chain";

  // ShapeError unless non-empty and each layer's cols() the next one's rows().
  explicit StrassenTileChain(std::vector<StrassenTile<T>> layers);

  const std::vector<StrassenTile<T>>& layers() const { return *layers_; }
  Index rows() const { return layers_->front().rows(); }
  Index cols() const { return layers_->back().cols(); }
  // True when a batch of `batch` signals stays encoded between the layers: one tile size t
  // for all layers and t divides the batch (otherwise the layers run one by one).
  bool keeps_encoded(Index batch) const;

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const;
  bool acts_per_signal() const;

  // Device copies of the mixing matrices, made on first GPU use.
  struct DeviceForm;
  const DeviceForm& device_form(Context& ctx) const;

 private:
  std::shared_ptr<const std::vector<StrassenTile<T>>> layers_;
  std::shared_ptr<Lazy<std::shared_ptr<DeviceForm>>> device_ =
      std::make_shared<Lazy<std::shared_ptr<DeviceForm>>>();
};

// ---- compile-time rewrites: products of STL operators join one chain ----
namespace detail {
template <class T>
void append_layers(std::vector<StrassenTile<T>>& out, const StrassenTile<T>& layer) {
  out.push_back(layer);
}
template <class T>
void append_layers(std::vector<StrassenTile<T>>& out, const StrassenTileChain<T>& chain) {
  out.insert(out.end(), chain.layers().begin(), chain.layers().end());
}
template <class T, class L, class R>
StrassenTileChain<T> join_layers(const L& lhs, const R& rhs) {
  std::vector<StrassenTile<T>> layers;
  append_layers(layers, lhs);
  append_layers(layers, rhs);
  return StrassenTileChain<T>(std::move(layers));
}
}  // namespace detail

template <class T>
StrassenTileChain<T> operator*(const StrassenTile<T>& lhs, const StrassenTile<T>& rhs) {
  return detail::join_layers<T>(lhs, rhs);
}
template <class T>
StrassenTileChain<T> operator*(const StrassenTileChain<T>& lhs, const StrassenTile<T>& rhs) {
  return detail::join_layers<T>(lhs, rhs);
}
template <class T>
StrassenTileChain<T> operator*(const StrassenTile<T>& lhs, const StrassenTileChain<T>& rhs) {
  return detail::join_layers<T>(lhs, rhs);
}
template <class T>
StrassenTileChain<T> operator*(const StrassenTileChain<T>& lhs, const StrassenTileChain<T>& rhs) {
  return detail::join_layers<T>(lhs, rhs);
}

// Mixed precision on the GPU: applies a float STL operator to half or bfloat16 signals.
// The encoded weights are converted once (cached), the colour GEMMs run on tensor cores
// with fp32 accumulation, encode and decode compute in fp32. On the host, through float (as
// for the other families); device views in a build without CUDA are a DeviceError.
template <ReducedPrecision Storage>
void apply_reduced_precision(const StrassenTile<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

// The same for a chain (encoded activations stored in 16 bits between layers).
template <ReducedPrecision Storage>
void apply_reduced_precision(const StrassenTileChain<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class StrassenTile<float>;
extern template class StrassenTile<double>;
extern template class StrassenTile<std::complex<float>>;
extern template class StrassenTile<std::complex<double>>;
extern template class StrassenTileChain<float>;
extern template class StrassenTileChain<double>;
extern template class StrassenTileChain<std::complex<float>>;
extern template class StrassenTileChain<std::complex<double>>;

}  // namespace strop
