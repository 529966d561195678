#include "strop/operators/blast.hpp"

#include "operators/blr/blr_ks_form.hpp"
#include "operators/blr/blr_support.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/leaf_support.hpp"
#if STROP_HAVE_CUDA
#include "operators/blr/blr_gemm_device.hpp"
#endif

namespace strop {

template <class T>
Blast<T>::Blast(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
                std::vector<T> left, std::vector<T> diagonals, std::vector<T> right) {
  const BlockGrid grid = detail::make_block_grid("blast", rows, cols, row_blocks, col_blocks, rank);
  detail::require_size("blast", "left (U factors)", left, rows * rank);
  detail::require_size("blast", "diagonals (s)", diagonals, grid.block_count() * rank);
  detail::require_size("blast", "right (V factors)", right, rank * cols);
  detail::require_finite("blast (left)", left.data(), static_cast<Index>(left.size()));
  detail::require_finite("blast (diagonals)", diagonals.data(),
                         static_cast<Index>(diagonals.size()));
  detail::require_finite("blast (right)", right.data(), static_cast<Index>(right.size()));
  state_ =
      std::make_shared<State>(State{grid, std::move(left), std::move(diagonals), std::move(right)});
}

template <class T>
Blast<T> Blast<T>::random(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
                          std::mt19937& rng) {
  const BlockGrid g = detail::make_block_grid("blast", rows, cols, row_blocks, col_blocks, rank);
  // Inner lengths of the three stages: block_width (V), col_blocks (s), rank (U).
  auto scale = [](Index inner) { return 1 / std::sqrt(double(std::max<Index>(inner, 1))); };
  auto left = detail::random_normal<T>(rows * rank, scale(rank), rng);
  auto diagonals = detail::random_normal<T>(g.block_count() * rank, scale(col_blocks), rng);
  auto right = detail::random_normal<T>(rank * cols, scale(g.block_width()), rng);
  return Blast(rows, cols, row_blocks, col_blocks, rank, std::move(left), std::move(diagonals),
               std::move(right));
}

template <class T>
typename Blast<T>::ConstBlock Blast<T>::left_factor(Index k) const {
  const BlockGrid& g = state_->grid;
  require<ShapeError>(k >= 0 && k < g.row_blocks, "blast: block-row ", k, " is outside [0, ",
                      g.row_blocks, ")");
  return ConstBlock(state_->left.data() + k * g.block_height() * g.rank, g.block_height(), g.rank);
}

template <class T>
typename Blast<T>::ConstVector Blast<T>::diagonal(Index k, Index l) const {
  const BlockGrid& g = state_->grid;
  require<ShapeError>(k >= 0 && k < g.row_blocks && l >= 0 && l < g.col_blocks, "blast: block (", k,
                      ", ", l, ") is outside the ", g.row_blocks, "x", g.col_blocks, " grid");
  return ConstVector(state_->diagonals.data() + (k * g.col_blocks + l) * g.rank, g.rank);
}

template <class T>
typename Blast<T>::ConstBlock Blast<T>::right_factor(Index l) const {
  const BlockGrid& g = state_->grid;
  require<ShapeError>(l >= 0 && l < g.col_blocks, "blast: block-column ", l, " is outside [0, ",
                      g.col_blocks, ")");
  return ConstBlock(state_->right.data() + l * g.rank * g.block_width(), g.rank, g.block_width());
}

namespace {
// w = diag(d) z (first) or w += diag(d) z.
template <class D, class Z, class W>
void diagonal_product(const D& d, const Z& z, W w, bool first) {
  if (first) {
    w.noalias() = d.asDiagonal() * z;
  } else {
    w.noalias() += d.asDiagonal() * z;
  }
}
}  // namespace

template <class T>
void Blast<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                               Context& ctx) const {
  const BlockGrid& g = state_->grid;
  const Index r = g.rank;
  if (r == 0) return detail::scale(beta, Y, ctx);
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    if (detail::apply_float_plan_where_preferred(*this, op, X, Y, alpha, beta, ctx)) return;
#endif
    const KSChain<T>& chain = device_form_->get([&] { return detail::blast_ks_form(*this); });
    return chain.apply_unchecked(op, X, Y, alpha, beta, ctx);
  }
  // A:        Z_l = V_l X_l,      W_k = sum_l diag(s_{k,l}) Z_l,        Y_k = U_k W_k.
  // A^T, A^H: Z_k = op(U_k) X_k,  W_l = sum_k op(diag(s_{k,l})) Z_k,    Y_l = op(V_l) W_l.
  // Input blocks are indexed i, output blocks o.
  const bool transposed = op != Op::NoTrans;
  const double work = double(parameter_count()) * double(X.cols);  // multiply-adds
  const auto [in_blocks, out_blocks, in_size, out_size] = g.oriented(transposed);
  auto first = [&](Index i) { return transposed ? left_factor(i) : right_factor(i); };
  auto second = [&](Index o) { return transposed ? right_factor(o) : left_factor(o); };
  auto coupling = [&](Index o, Index i) { return transposed ? diagonal(i, o) : diagonal(o, i); };

  const Layout layout = layout_of(X);
  TempMatrix<T> z(in_blocks * r, X.cols, layout, MemorySpace::Host, ctx);
  TempMatrix<T> w(out_blocks * r, X.cols, layout, MemorySpace::Host, ctx);
  detail::parallel_for(in_blocks, work, [&](Index i) {
    detail::host_gemm(op, first(i), X.row_block(i * in_size, in_size), z.view.row_block(i * r, r),
                      T(1), T(0));
  });
  detail::parallel_for(out_blocks, work, [&](Index o) {
    const auto w_o = eigen_map(w.view.row_block(o * r, r));
    for (Index i = 0; i < in_blocks; ++i) {
      const auto s = coupling(o, i);
      const auto z_i = eigen_map(ConstView<T>(z.view.row_block(i * r, r)));
      if (op == Op::Adjoint) {
        diagonal_product(s.conjugate(), z_i, w_o, i == 0);
      } else {
        diagonal_product(s, z_i, w_o, i == 0);
      }
    }
    detail::host_gemm(op, second(o), ConstView<T>(w.view.row_block(o * r, r)),
                      Y.row_block(o * out_size, out_size), alpha, beta);
  });
}

template <class T>
double Blast<T>::flops(Index batch) const {
  // Every stored scalar takes part in exactly one multiply-add per signal.
  return detail::flops_per_fma<T>() * double(parameter_count()) * double(batch);
}

#define STROP_INSTANTIATE(T) template class Blast<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
