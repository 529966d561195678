#include "strop/expr/kron.hpp"

#include <algorithm>
#include <limits>

#include "runtime/reduced_apply.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/algebra.hpp"
#include "strop/expr/elementwise.hpp"
#include "strop/expr/transposed.hpp"
#include "strop/operators/dense.hpp"
#include "strop/operators/identity.hpp"
#include "strop/operators/kron_matmul.hpp"
#if STROP_HAVE_CUDA
#include "operators/kron/kron_kernels.hpp"
#endif

namespace strop {

template <class T>
Kron<T>::Kron(std::vector<AnyOperator<T>> factors) : factors_(std::move(factors)) {
  require<ShapeError>(!factors_.empty(), "kron: needs at least one factor");
  for (const auto& f : factors_) {
    // With several factors, each one is applied to slices of every signal side by side
    // (apply_factor_by_factor), so a factor that mixes the signals of a batch (a
    // Strassen-Tile operator with inexact encoders) would mix slices of one signal instead.
    require<ShapeError>(factors_.size() == 1 || f.acts_per_signal(),
                        "kron: a factor mixes the signals of a batch (a Strassen-Tile operator",
                        " with inexact encoders); such an operator has no Kronecker product");
    require<ShapeError>(!__builtin_mul_overflow(rows_, f.rows(), &rows_) &&
                            !__builtin_mul_overflow(cols_, f.cols(), &cols_),
                        "kron: the product of the factors' extents overflows a 64-bit index");
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
  // Empty extents (a factor without rows or columns): reached from a node that applies its
  // children directly (a product's inner operand), not only through apply's checks.
  if (Y.rows == 0 || Y.cols == 0) return;
  if (X.rows == 0) return detail::scale(beta, Y, ctx);
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
  apply_factor_by_factor(op, X, Y, alpha, beta, ctx);
}

namespace {
// out[b][q][s] = alpha * in[b][s][q] (+ beta * out) for packed column-major data: signal b's
// S x Q block, row-major, transposed into its Q x S block.
template <class T>
void permute_slices(const T* in, T* out, Index B, Index S, Index Q, T alpha, T beta,
                    MemorySpace space, Context& ctx) {
  if (space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    detail::kron_permute(in, out, B, S, Q, Index(1), alpha, beta, true, ctx);
#else
    (void)ctx;  // device data cannot exist without CUDA
#endif
    return;
  }
  const Index K = S * Q;
#pragma omp parallel for if (B * K > 65536)
  for (Index b = 0; b < B; ++b)
    for (Index q = 0; q < Q; ++q)
      for (Index s = 0; s < S; ++s) {
        T& y = out[b * K + q * S + s];
        const T v = alpha * in[b * K + s * Q + q];
        y = beta == T(0) ? v : v + beta * y;
      }
}

template <class T>
bool packed_column_major(const MatrixView<T>& v) {
  return v.row_stride == 1 && (v.col_stride == v.rows || v.cols == 1);
}
}  // namespace

namespace detail {

double kron_order_cost(const std::vector<KronFactorCost>& factors,
                       const std::vector<std::size_t>& order) {
  double K = 1;  // values of the intermediate, a signal
  for (const KronFactorCost& f : factors)
    K *= double(f.in);
  double total = 0;
  for (std::size_t f : order) {
    const double slices = K / double(factors[f].in);
    total += factors[f].flops * slices;
    K = slices * double(factors[f].out);
  }
  return total;
}

// With r_f = out_f / in_f and c_f = flops_f / in_f, an order s costs
// prod(in) * sum_k c_{s_k} r_{s_1} ... r_{s_(k-1)}. Two neighbours i, j (i first) cost
// c_i + r_i c_j, the other way c_j + r_j c_i: i first is no dearer iff
// c_i (1 - r_j) <= c_j (1 - r_i), i.e. (for c > 0) iff key_i >= key_j with
// key = (1 - r) / c = (in - out) / flops. Any order reaches the one sorted by decreasing key
// through swaps of neighbours out of that order, none of them dearer: the sorted order is
// optimal. (Not by the ratio out/in alone: dense 2 -> 1 goes before 100 -> 10, 2400 flops a
// signal against 4040.) A free factor (flops 0) that shrinks goes first, one that grows
// last, and a square one anywhere (it changes nothing).
std::vector<std::size_t> kron_cheapest_order(const std::vector<KronFactorCost>& factors) {
  auto key = [&](std::size_t f) {
    const double shrink = double(factors[f].in) - double(factors[f].out);
    if (factors[f].flops > 0) return shrink / factors[f].flops;
    const double inf = std::numeric_limits<double>::infinity();
    return shrink > 0 ? inf : shrink < 0 ? -inf : 0.0;
  };
  // Ties keep the sliced multiply's order (last factor first): one rotation per factor.
  std::vector<std::size_t> order(factors.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    order[k] = order.size() - 1 - k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  return order;
}

}  // namespace detail

// The mixed-product structure: (F_1 ⊗ ... ⊗ F_n) = prod_f (I ⊗ F_f ⊗ I), whose terms commute
// (each acts on its own mode), so the factors apply in any order: the cheapest one
// (detail::kron_cheapest_order, by flops), identities skipped. The intermediate Z (K x B,
// packed column-major) holds each signal as a tensor with one mode per factor (extent in_f
// before factor f, out_f after), its modes in a rotation of the natural order: mode `last`
// varies fastest, then last - 1, ..., wrapping around to last + 1, the slowest (X and Y:
// last = n - 1). Factor f is applied with its mode fastest: Z unfolds into a P x (S*B)
// column-major matrix (S = K/P slices of every signal side by side), so the factor is applied
// once, by its own path (KS kernel, cuBLAS, ...), to S*B signals, and its mode stays fastest.
// Making another mode fastest swaps two blocks of modes in each signal (one transpose); in the
// order last factor first that is the sliced multiply's permutation,
// Z'[q*S + s, b] = T[q, b*S + s].
template <class T>
void Kron<T>::apply_factor_by_factor(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                     Context& ctx) const {
  const bool transposed = op != Op::NoTrans;
  const std::size_t n = factors_.size();
  const Index B = X.cols;
  const MemorySpace space = X.space;
  std::vector<detail::KronFactorCost> shapes;
  for (const AnyOperator<T>& f : factors_)
    shapes.push_back({transposed ? f.rows() : f.cols(), transposed ? f.cols() : f.rows(),
                      transposed ? f.transposed_flops(1) : f.flops(1)});
  std::vector<std::size_t> order = detail::kron_cheapest_order(shapes);
  std::erase_if(order, [&](std::size_t f) {  // an identity changes nothing
    return factors_[f].template as<Identity<T>>() != nullptr;
  });

  // Room for the largest intermediate, packed column-major, X's rows included unless the
  // first factor reads X itself (packed, its mode n - 1 already the fastest).
  const bool reads_x = packed_column_major(X) && !order.empty() && order.front() == n - 1;
  Index largest = reads_x ? 0 : X.rows;
  {
    Index K = X.rows;
    for (std::size_t f : order) {
      // A factor wider than tall grows the intermediate past X and Y (a 1 x n factor after
      // an n x 1 one: n^2 per signal); a count that wraps would allocate too little.
      require<ShapeError>(!__builtin_mul_overflow(K / shapes[f].in, shapes[f].out, &K),
                          "kron: an intermediate of the factor-by-factor product has more rows ",
                          "than an index counts");
      largest = std::max(largest, K);
    }
  }
  TempMatrix<T> ping(largest, B, Layout::ColMajor, space, ctx);
  TempMatrix<T> pong(largest, B, Layout::ColMajor, space, ctx);

  const T* z = X.data;
  if (!packed_column_major(X)) {  // a packed copy (leading dimension X.rows, not largest)
    const MatrixView<T> copy = make_view(ping.view.data, X.rows, B, Layout::ColMajor, space);
    detail::axpby(T(1), X, T(0), copy, false, ctx);
    z = copy.data;
  }
  auto spare = [&] { return z == ping.view.data ? pong.view.data : ping.view.data; };
  Index K = X.rows;
  std::vector<Index> extent(n);
  for (std::size_t f = 0; f < n; ++f)
    extent[f] = shapes[f].in;
  std::size_t last = n - 1;
  // Rows of the modes last + 1, ..., to (cyclically): the block that goes behind the others
  // when mode `to` becomes the fastest. Nothing moves when it is 1 or K (to == last).
  auto leading = [&](std::size_t to) {
    Index S = 1;
    std::size_t m = last;
    do {
      m = (m + 1) % n;
      S *= extent[m];
    } while (m != to);
    return S;
  };
  auto moves = [&](std::size_t to) {
    const Index S = leading(to);
    return S != 1 && S != K;
  };
  // Makes mode `to` the fastest: out = a * Z' + b * out where anything moves.
  auto rotate = [&](std::size_t to, T* out, T a, T b) {
    const bool moved = moves(to);
    if (moved) {
      const Index S = leading(to);
      permute_slices(z, out, B, S, K / S, a, b, space, ctx);
      z = out;
    }
    last = to;
    return moved;
  };

  const bool y_packed = packed_column_major(Y);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t f = order[k];
    rotate(f, spare(), T(1), T(0));
    const Index P = shapes[f].in, Q = shapes[f].out, S = K / P;
    const ConstView<T> unfolded = make_view(z, P, S * B, Layout::ColMajor, space);
    extent[f] = Q;
    K = S * Q;
    // The last factor writes Y itself where the result is then in natural order and Y takes
    // the unfolding (any Y where a factor spans the whole signal, S == 1).
    if (k + 1 == order.size() && !moves(n - 1) && (S == 1 || y_packed)) {
      const MatrixView<T> y = S == 1 ? Y : make_view(Y.data, Q, S * B, Layout::ColMajor, space);
      return factors_[f].apply_unchecked(op, unfolded, y, alpha, beta, ctx);
    }
    T* out = spare();
    factors_[f].apply_unchecked(op, unfolded, make_view(out, Q, S * B, Layout::ColMajor, space),
                                T(1), T(0), ctx);
    z = out;
  }
  // Back to the natural order, straight into a packed Y.
  if (y_packed && rotate(n - 1, Y.data, alpha, beta)) return;
  rotate(n - 1, spare(), T(1), T(0));
  detail::axpby(alpha, ConstView<T>(make_view(z, K, B, Layout::ColMajor, space)), beta, Y, false,
                ctx);
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const Kron<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
#if STROP_HAVE_CUDA
  std::vector<KronFactorRef<float>> refs(A.factors().size());
  bool all_dense = true;
  for (std::size_t f = 0; f < refs.size() && all_dense; ++f)
    all_dense = engine_factor(A.factors()[f], op, ctx, refs[f]);
  if (all_dense)  // the thread's algorithm, as the full-precision path (Gemm or Auto's plan)
    return kron_matmul<Storage>(refs, X, Y, alpha, beta, ctx, nullptr, 0, kron_algorithm());
  detail::apply_through_float(A, op, X, Y, alpha, beta, ctx);  // other factors
#else
  throw DeviceError("kron: strop was built without CUDA; apply it to host data");
#endif
}

template void apply_reduced_precision<half>(const Kron<float>&, Op, ConstView<half>,
                                            MatrixView<half>, float, float, Context&);
template void apply_reduced_precision<bfloat16>(const Kron<float>&, Op, ConstView<bfloat16>,
                                                MatrixView<bfloat16>, float, float, Context&);

namespace {
// The sliced multiply's cost (kron.hpp): step f applies op(F_f) to K / (F_f's input size)
// slices of every signal, K the intermediate's rows before it. A^T runs the same steps with
// the factors transposed, so the slice counts differ for rectangular factors.
template <class T>
double sliced_multiply_flops(const std::vector<AnyOperator<T>>& factors, Index batch,
                             bool transposed) {
  Index K = 1;
  for (const auto& f : factors)
    K *= transposed ? f.rows() : f.cols();
  if (K == 0) return 0;  // some factor has no input: nothing to multiply (and no slices)
  double total = 0;
  for (std::size_t f = factors.size(); f-- > 0;) {
    const AnyOperator<T>& factor = factors[f];
    const Index slices = K / (transposed ? factor.rows() : factor.cols());
    total += transposed ? factor.transposed_flops(batch * slices) : factor.flops(batch * slices);
    K = slices * (transposed ? factor.cols() : factor.rows());
  }
  return total;
}
}  // namespace

template <class T>
double Kron<T>::flops(Index batch) const {
  return sliced_multiply_flops(factors_, batch, false);
}

template <class T>
double Kron<T>::transposed_flops(Index batch) const {
  return sliced_multiply_flops(factors_, batch, true);
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
