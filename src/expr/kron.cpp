#include "strop/expr/kron.hpp"

#include "strop/core/buffer.hpp"
#include "strop/expr/algebra.hpp"

namespace strop {

template <class T>
Kron<T>::Kron(std::vector<AnyOperator<T>> factors) : factors_(std::move(factors)) {
  require<ShapeError>(!factors_.empty(), "kron: needs at least one factor");
  for (const auto& f : factors_) {
    rows_ *= f.rows();
    cols_ *= f.cols();
  }
}

template <class T>
void Kron<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                              Context& ctx) const {
  const bool transposed = op != Op::NoTrans;
  auto in_dim = [&](const AnyOperator<T>& f) { return transposed ? f.rows() : f.cols(); };
  auto out_dim = [&](const AnyOperator<T>& f) { return transposed ? f.cols() : f.rows(); };

  // Ping-pong intermediates, large enough for every step.
  Index length = X.rows;
  Index largest = 0;
  for (std::size_t f = factors_.size(); f-- > 1;) {
    length = length / in_dim(factors_[f]) * out_dim(factors_[f]);
    largest = std::max(largest, length);
  }
  const Layout layout = layout_of(Y);
  TempMatrix<T> ping(largest, X.cols, layout, X.space, ctx);
  TempMatrix<T> pong(largest, X.cols, layout, X.space, ctx);

  ConstView<T> in = X;
  Index K = X.rows;
  for (std::size_t f = factors_.size(); f-- > 0;) {
    const AnyOperator<T>& factor = factors_[f];
    const Index P = in_dim(factor);
    const Index Q = out_dim(factor);
    const Index slices = K / P;
    const bool last = f == 0;
    MatrixView<T> out =
        last ? Y : (in.data == ping.view.data ? pong.view : ping.view).row_block(0, slices * Q);
    for (Index s = 0; s < slices; ++s) {
      factor.apply_unchecked(op, in.row_block(s * P, P), out.row_slice(s, Q, slices),
                             last ? alpha : T(1), last ? beta : T(0), ctx);
    }
    in = out;
    K = slices * Q;
  }
}

template <class T>
double Kron<T>::flops(Index batch) const {
  double total = 0;
  Index K = cols_;
  for (std::size_t f = factors_.size(); f-- > 0;) {
    const Index slices = K / factors_[f].cols();
    total += factors_[f].flops(batch * slices);
    K = slices * factors_[f].rows();
  }
  return total;
}

template <class T>
Index Kron<T>::parameter_count() const {
  Index total = 0;
  for (const auto& f : factors_)
    total += f.parameter_count();
  return total;
}

template <class T>
Kron<T> transpose_of(const Kron<T>& k) {
  std::vector<AnyOperator<T>> factors;
  for (const auto& f : k.factors())
    factors.emplace_back(f.transpose());
  return Kron<T>(std::move(factors));
}

template <class T>
Kron<T> adjoint_of(const Kron<T>& k) {
  std::vector<AnyOperator<T>> factors;
  for (const auto& f : k.factors())
    factors.emplace_back(f.adjoint());
  return Kron<T>(std::move(factors));
}

#define STROP_INSTANTIATE(T)                       \
  template class Kron<T>;                          \
  template Kron<T> transpose_of(const Kron<T>& k); \
  template Kron<T> adjoint_of(const Kron<T>& k);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
