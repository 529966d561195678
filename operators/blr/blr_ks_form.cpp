#include "operators/blr/blr_ks_form.hpp"

#include <vector>

namespace strop::detail {

template <class T>
KSChain<T> blast_ks_form(const Blast<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, h = g.block_height(), w = g.block_width(),
              r = g.rank;
  // Value (i, k, l, j) of a KS factor sits at ((i b + k) c + l) d + j.
  std::vector<T> u(static_cast<std::size_t>(K * h * r)), v(static_cast<std::size_t>(L * r * w));
  for (Index k = 0; k < K; ++k)
    for (Index i = 0; i < h; ++i)
      for (Index t = 0; t < r; ++t)
        u[static_cast<std::size_t>((k * h + i) * r + t)] = A.left_factor(k)(i, t);
  for (Index l = 0; l < L; ++l)
    for (Index t = 0; t < r; ++t)
      for (Index j = 0; j < w; ++j)
        v[static_cast<std::size_t>((l * r + t) * w + j)] = A.right_factor(l)(t, j);
  // s_{k,l} at (k L + l) r: already the (1, K, L, r) order.
  return KSChain<T>({KSFactor<T>({K, h, r, 1}, std::move(u)),
                     KSFactor<T>({1, K, L, r}, A.diagonal_values()),
                     KSFactor<T>({L, r, w, 1}, std::move(v))});
}

template <class T>
typename Monarch<T>::KSForm monarch_ks_form(const Monarch<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, h = g.block_height(), w = g.block_width(),
              r = g.rank;
  std::vector<T> right(static_cast<std::size_t>(L * K * r * w));
  std::vector<T> left(static_cast<std::size_t>(K * h * L * r));
  std::vector<Index> shuffle(static_cast<std::size_t>(K * L * r));
  for (Index k = 0; k < K; ++k) {
    for (Index l = 0; l < L; ++l) {
      const auto R = A.right_block(k, l);
      const auto Lb = A.left_block(k, l);
      for (Index t = 0; t < r; ++t) {
        for (Index j = 0; j < w; ++j)
          right[static_cast<std::size_t>(((l * K + k) * r + t) * w + j)] = R(t, j);
        for (Index i = 0; i < h; ++i)
          left[static_cast<std::size_t>((k * h + i) * (L * r) + l * r + t)] = Lb(i, t);
        // Row (k, l, t) of the shuffled vector is row (l, k, t) of R's output.
        shuffle[static_cast<std::size_t>((k * L + l) * r + t)] = (l * K + k) * r + t;
      }
    }
  }
  return {KSFactor<T>({K, h, L * r, 1}, std::move(left)), Permutation<T>(std::move(shuffle)),
          KSFactor<T>({L, K * r, w, 1}, std::move(right))};
}

#define STROP_INSTANTIATE(T)                          \
  template KSChain<T> blast_ks_form(const Blast<T>&); \
  template typename Monarch<T>::KSForm monarch_ks_form(const Monarch<T>&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
