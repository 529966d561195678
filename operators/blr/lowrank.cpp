#include "strop/operators/lowrank.hpp"

#include "operators/blr/blr_support.hpp"
#include "strop/core/buffer.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
LowRank<T>::LowRank(HostMatrix<T> left, HostMatrix<T> right) {
  require<ShapeError>(left.cols() == right.rows(), "lowrank: left is ", left.rows(), "x",
                      left.cols(), " but right is ", right.rows(), "x", right.cols(),
                      " (left.cols() must equal right.rows())");
  detail::require_finite("lowrank (left)", left.data(), left.size());
  detail::require_finite("lowrank (right)", right.data(), right.size());
  state_ = std::make_shared<State>(State{std::move(left), std::move(right)});
}

template <class T>
LowRank<T> LowRank<T>::random(Index rows, Index cols, Index rank, std::mt19937& rng) {
  require<ShapeError>(rows >= 0 && cols >= 0 && rank >= 0, "lowrank: negative size (", rows, "x",
                      cols, ", rank ", rank, ")");
  detail::checked_element_count("lowrank (left)", rows, rank);
  detail::checked_element_count("lowrank (right)", rank, cols);
  auto scale = [](Index inner) { return 1 / std::sqrt(double(std::max<Index>(inner, 1))); };
  const auto left = detail::random_normal<T>(rows * rank, scale(rank), rng);
  const auto right = detail::random_normal<T>(rank * cols, scale(cols), rng);
  return LowRank(Eigen::Map<const HostMatrix<T>>(left.data(), rows, rank),
                 Eigen::Map<const HostMatrix<T>>(right.data(), rank, cols));
}

template <class T>
void LowRank<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                 Context& ctx) const {
  if (rank() == 0) return detail::scale(beta, Y, ctx);
  if (X.space == MemorySpace::Device) {
    const DenseFactors& f = device_form_->get([&] {
      return DenseFactors{Dense<T>(state_->left), Dense<T>(state_->right)};
    });
    const bool transposed = op != Op::NoTrans;
    TempMatrix<T> z(rank(), X.cols, layout_of(Y), MemorySpace::Device, ctx);
    (transposed ? f.left : f.right).apply_unchecked(op, X, z.view, T(1), T(0), ctx);
    (transposed ? f.right : f.left).apply_unchecked(op, ConstView<T>(z.view), Y, alpha, beta, ctx);
    return;
  }
  // op(left * right) = op(right) op(left): the factor next to the input goes first.
  const bool transposed = op != Op::NoTrans;
  const HostMatrix<T>& first = transposed ? state_->left : state_->right;
  const HostMatrix<T>& second = transposed ? state_->right : state_->left;
  TempMatrix<T> z(rank(), X.cols, layout_of(X), MemorySpace::Host, ctx);
  detail::host_gemm(op, first, X, z.view, T(1), T(0));
  detail::host_gemm(op, second, ConstView<T>(z.view), Y, alpha, beta);
}

template <class T>
double LowRank<T>::flops(Index batch) const {
  return detail::flops_per_fma<T>() * double(rank()) * double(rows() + cols()) * double(batch);
}

#define STROP_INSTANTIATE(T) template class LowRank<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
