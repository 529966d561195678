#include "strop/operators/diagonal.hpp"

#include "strop/expr/elementwise.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
Diagonal<T>::Diagonal(Vector diagonal) : diagonal_(std::make_shared<Vector>(std::move(diagonal))) {
  detail::require_finite("diagonal", diagonal_->data(), diagonal_->size());
}

template <class T>
void Diagonal<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                  Context& ctx) const {
  if (X.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    const bool conjugate = is_complex_v<T> && op == Op::Adjoint;
    const T* d = device_diagonal_->get(diagonal_->data(), rows(), ctx, conjugate);
    return detail::device_scale_rows(alpha, d, X, beta, Y, ctx);
#else
    (void)ctx;
    detail::require_host("diagonal", X.space);
#endif
  }
  auto x = eigen_map(X);
  auto y = eigen_map(Y);
  const Vector d =
      op == Op::Adjoint ? Vector(alpha * diagonal_->conjugate()) : Vector(alpha * *diagonal_);
  if (beta == T(0)) {
    y = d.asDiagonal() * x;
  } else {
    y = d.asDiagonal() * x + beta * y;
  }
}

template <class T>
double Diagonal<T>::flops(Index batch) const {
  return detail::flops_per_fma<T>() / 2 * double(rows()) * double(batch);
}

#define STROP_INSTANTIATE(T) template class Diagonal<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
