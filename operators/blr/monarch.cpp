#include "strop/operators/monarch.hpp"

#include "operators/blr/blr_ks_form.hpp"
#include "operators/blr/blr_support.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/leaf_support.hpp"
#if STROP_HAVE_CUDA
#include "operators/blr/blr_gemm_device.hpp"
#endif

namespace strop {

template <class T>
Monarch<T>::Monarch(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
                    std::vector<T> left, std::vector<T> right) {
  const BlockGrid grid =
      detail::make_block_grid("monarch", rows, cols, row_blocks, col_blocks, rank);
  detail::require_size("monarch", "left (L blocks)", left,
                       grid.block_count() * grid.block_height() * rank);
  detail::require_size("monarch", "right (R blocks)", right,
                       grid.block_count() * rank * grid.block_width());
  detail::require_finite("monarch (left)", left.data(), static_cast<Index>(left.size()));
  detail::require_finite("monarch (right)", right.data(), static_cast<Index>(right.size()));
  state_ = std::make_shared<State>(State{grid, std::move(left), std::move(right)});
}

template <class T>
Monarch<T> Monarch<T>::random(Index rows, Index cols, Index row_blocks, Index col_blocks,
                              Index rank, std::mt19937& rng) {
  const BlockGrid g = detail::make_block_grid("monarch", rows, cols, row_blocks, col_blocks, rank);
  // Each output sums col_blocks * rank terms of L, each of which sums block_width terms of R.
  const double left_scale = 1 / std::sqrt(double(std::max<Index>(col_blocks * rank, 1)));
  const double right_scale = 1 / std::sqrt(double(std::max<Index>(g.block_width(), 1)));
  auto left = detail::random_normal<T>(g.block_count() * g.block_height() * rank, left_scale, rng);
  auto right = detail::random_normal<T>(g.block_count() * rank * g.block_width(), right_scale, rng);
  return Monarch(rows, cols, row_blocks, col_blocks, rank, std::move(left), std::move(right));
}

template <class T>
typename Monarch<T>::ConstBlock Monarch<T>::left_block(Index k, Index l) const {
  const BlockGrid& g = state_->grid;
  require<ShapeError>(k >= 0 && k < g.row_blocks && l >= 0 && l < g.col_blocks, "monarch: block (",
                      k, ", ", l, ") is outside the ", g.row_blocks, "x", g.col_blocks, " grid");
  const Index size = g.block_height() * g.rank;
  return ConstBlock(state_->left.data() + (k * g.col_blocks + l) * size, g.block_height(), g.rank);
}

template <class T>
typename Monarch<T>::ConstBlock Monarch<T>::right_block(Index k, Index l) const {
  const BlockGrid& g = state_->grid;
  require<ShapeError>(k >= 0 && k < g.row_blocks && l >= 0 && l < g.col_blocks, "monarch: block (",
                      k, ", ", l, ") is outside the ", g.row_blocks, "x", g.col_blocks, " grid");
  const Index size = g.rank * g.block_width();
  return ConstBlock(state_->right.data() + (k * g.col_blocks + l) * size, g.rank, g.block_width());
}

template <class T>
void Monarch<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                 Context& ctx) const {
  const BlockGrid& g = state_->grid;
  const Index r = g.rank;
  if (r == 0) return detail::scale(beta, Y, ctx);
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    if (detail::apply_float_plan_where_preferred(*this, op, X, Y, alpha, beta, ctx)) return;
#endif
    // op(left shuffle right) = op(right) shuffle^T op(left): two KS factors and a row
    // gather, through two device temporaries of K L r rows.
    const KSForm& f = device_form_->get([&] { return detail::monarch_ks_form(*this); });
    const bool transposed = op != Op::NoTrans;
    const Index middle = g.row_blocks * g.col_blocks * r;
    TempMatrix<T> z1(middle, X.cols, layout_of(Y), MemorySpace::Device, ctx);
    TempMatrix<T> z2(middle, X.cols, layout_of(Y), MemorySpace::Device, ctx);
    (transposed ? f.left : f.right).apply_unchecked(op, X, z1.view, T(1), T(0), ctx);
    f.shuffle.apply_unchecked(transposed ? Op::Trans : Op::NoTrans, ConstView<T>(z1.view), z2.view,
                              T(1), T(0), ctx);
    (transposed ? f.right : f.left).apply_unchecked(op, ConstView<T>(z2.view), Y, alpha, beta, ctx);
    return;
  }
  // A: Y_k = sum_l L_{k,l} (R_{k,l} X_l). A^T, A^H: Y_l = sum_k op(R_{k,l}) (op(L_{k,l}) X_k).
  // Both read input block i and write output block o; block (o, i) of op(A) is
  // second(o, i) * first(o, i).
  const bool transposed = op != Op::NoTrans;
  const double work = double(parameter_count()) * double(X.cols);  // multiply-adds
  const auto [in_blocks, out_blocks, in_size, out_size] = g.oriented(transposed);
  auto first = [&](Index o, Index i) { return transposed ? left_block(i, o) : right_block(o, i); };
  auto second = [&](Index o, Index i) { return transposed ? right_block(i, o) : left_block(o, i); };

  // Z holds first(o, i) X_i at rows [(o * in_blocks + i) r, +r).
  TempMatrix<T> z(out_blocks * in_blocks * r, X.cols, layout_of(X), MemorySpace::Host, ctx);
  auto z_block = [&](Index o, Index i) { return z.view.row_block((o * in_blocks + i) * r, r); };
  detail::parallel_for(out_blocks * in_blocks, work, [&](Index j) {
    const Index o = j / in_blocks;
    const Index i = j % in_blocks;
    detail::host_gemm(op, first(o, i), X.row_block(i * in_size, in_size), z_block(o, i), T(1),
                      T(0));
  });
  detail::parallel_for(out_blocks, work, [&](Index o) {
    const MatrixView<T> y = Y.row_block(o * out_size, out_size);
    for (Index i = 0; i < in_blocks; ++i) {
      detail::host_gemm(op, second(o, i), ConstView<T>(z_block(o, i)), y, alpha,
                        i == 0 ? beta : T(1));
    }
  });
}

template <class T>
double Monarch<T>::flops(Index batch) const {
  // Every stored scalar takes part in exactly one multiply-add per signal.
  return detail::flops_per_fma<T>() * double(parameter_count()) * double(batch);
}

#define STROP_INSTANTIATE(T) template class Monarch<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
