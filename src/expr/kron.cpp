#include "strop/expr/kron.hpp"

#include "strop/core/buffer.hpp"
#include "strop/expr/algebra.hpp"
#include "strop/expr/transposed.hpp"
#include "strop/operators/dense.hpp"
#include "strop/operators/identity.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop {

template <class T>
Kron<T>::Kron(std::vector<AnyOperator<T>> factors) : factors_(std::move(factors)) {
  require<ShapeError>(!factors_.empty(), "kron: needs at least one factor");
  for (const auto& f : factors_) {
    rows_ *= f.rows();
    cols_ *= f.cols();
  }
}

namespace {
// The engine's view of op(F) when F is a Dense (possibly behind a transpose/adjoint node)
// or an Identity; false for any other operator (the Kron then runs factor by factor).
template <class T>
bool engine_factor(const AnyOperator<T>& f, Op op, Context& ctx, KronFactorRef<T>& ref) {
  if (f.template as<Identity<T>>() != nullptr) {
    ref = KronFactorRef<T>::identity(f.rows());
    return true;
  }
  // F = D, D^T or D^H: compose the node's own transposition/conjugation with op.
  const Dense<T>* d = f.template as<Dense<T>>();
  bool transpose = false, conjugate = false;
  if (d == nullptr) {
    if (const auto* t = f.template as<Transposed<AnyOperator<T>, false>>()) {
      d = t->inner().template as<Dense<T>>();
      transpose = true;
    } else if (const auto* h = f.template as<Transposed<AnyOperator<T>, true>>()) {
      d = h->inner().template as<Dense<T>>();
      transpose = true;
      conjugate = is_complex_v<T>;
    }
  }
  if (d == nullptr) return false;
  if (op != Op::NoTrans) transpose = !transpose;
  if (op == Op::Adjoint && is_complex_v<T>) conjugate = !conjugate;
  ref = KronFactorRef<T>::column_major(d->device_values(ctx), d->rows(), d->cols(),
                                       transpose ? Op::Trans : Op::NoTrans);
  ref.conjugate = conjugate;
  return true;
}
}  // namespace

template <class T>
void Kron<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                              Context& ctx) const {
  // On the device, products of dense factors go to the Kron-matmul engine (FastKron's
  // fused sliced multiply, operators/kron/); anything else runs factor by factor below.
  if (X.space == MemorySpace::Device) {
    std::vector<KronFactorRef<T>> refs(factors_.size());
    bool all_dense = true;
    for (std::size_t f = 0; f < factors_.size() && all_dense; ++f)
      all_dense = engine_factor(factors_[f], op, ctx, refs[f]);
    if (all_dense)
      return kron_matmul<T>(refs, X, Y, alpha, beta, ctx, nullptr, 0, kron_algorithm());
  }
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
