#include "strop/operators/permutation.hpp"

#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
Permutation<T>::Permutation(std::vector<Index> perm)
    : perm_(std::make_shared<std::vector<Index>>(std::move(perm))) {
  const Index n = rows();
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (Index i = 0; i < n; ++i) {
    const Index p = (*perm_)[i];
    require<PatternError>(p >= 0 && p < n, "permutation: entry ", i, " is ", p, ", outside [0, ", n,
                          ")");
    require<PatternError>(!seen[p], "permutation: index ", p, " appears twice");
    seen[p] = true;
  }
}

template <class T>
Permutation<T> Permutation<T>::bit_reversal(Index n) {
  require<ShapeError>(n >= 1 && (n & (n - 1)) == 0, "bit_reversal: n = ", n,
                      " is not a power of two");
  int bits = 0;
  while ((Index(1) << bits) < n)
    ++bits;
  std::vector<Index> perm(n);
  for (Index i = 0; i < n; ++i) {
    Index r = 0;
    for (int b = 0; b < bits; ++b)
      r |= ((i >> b) & 1) << (bits - 1 - b);
    perm[i] = r;
  }
  return Permutation(std::move(perm));
}

template <class T>
void Permutation<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                     Context&) const {
  detail::require_host("permutation", X.space);
  auto x = eigen_map(X);
  auto y = eigen_map(Y);
  const auto& perm = *perm_;
  for (Index i = 0; i < rows(); ++i) {
    // P: row i of Y is row perm[i] of X; P^T scatters instead.
    const Index dst = op == Op::NoTrans ? i : perm[i];
    const Index src = op == Op::NoTrans ? perm[i] : i;
    if (beta == T(0)) {
      y.row(dst) = alpha * x.row(src);
    } else {
      y.row(dst) = alpha * x.row(src) + beta * y.row(dst);
    }
  }
}

#define STROP_INSTANTIATE(T) template class Permutation<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
