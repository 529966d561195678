#include "strop/operators/permutation.hpp"

#include "strop/expr/elementwise.hpp"
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
  const auto build = [n] {
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
  };
  // n is the caller's: a table of n indices that host memory cannot hold is a ShapeError.
  return detail::allocating_host(detail::concat("permutation bit_reversal(", n, ")"), n, "indices",
                                 sizeof(Index), build);
}

template <class T>
void Permutation<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                     Context& ctx) const {
  const auto& perm = *perm_;
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    // P gathers rows with perm; P^T (the inverse) gathers with the inverse permutation.
    const Index n = rows();
    const Index* from =
        op == Op::NoTrans
            ? device_perm_->get(perm.data(), n, ctx)
            : device_inverse_->get_or_make(n, ctx, [&] {
                std::vector<Index> inverse(perm.size());
                for (Index i = 0; i < n; ++i)
                  inverse[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = i;
                return inverse;
              });
    return detail::device_gather_rows(alpha, X, from, beta, Y, ctx);
#else
    (void)ctx;
    detail::require_host("permutation", X.space);
#endif
  }
  auto x = eigen_map(X);
  auto y = eigen_map(Y);
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
