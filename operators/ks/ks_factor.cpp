#include "strop/operators/ks_factor.hpp"

#include <cmath>

#include "runtime/host_gemm.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
KSFactor<T>::KSFactor(KSPattern pattern, std::vector<T> values) {
  pattern.validate();
  require<ShapeError>(static_cast<Index>(values.size()) == pattern.nnz(), "ks_factor: pattern ",
                      pattern, " needs a*b*c*d = ", pattern.nnz(), " values, got ", values.size());
  detail::require_finite("ks_factor", values.data(), static_cast<Index>(values.size()));
  state_ = std::make_shared<const State>(pattern, std::move(values));
}

template <class T>
KSFactor<T> KSFactor<T>::random(KSPattern pattern, std::mt19937& rng) {
  pattern.validate();
  using Real = RealOf<T>;
  std::normal_distribution<Real> normal;
  // A complex entry has two unit-variance parts: scale so that E|w|^2 = 1/c either way.
  const Real scale = Real(1) / std::sqrt(Real(is_complex_v<T> ? 2 : 1) * Real(pattern.c));
  std::vector<T> values(static_cast<std::size_t>(pattern.nnz()));
  for (T& v : values) {
    if constexpr (is_complex_v<T>) {
      const Real re = normal(rng);
      v = T(re, normal(rng)) * scale;
    } else {
      v = normal(rng) * scale;
    }
  }
  return KSFactor(pattern, std::move(values));
}

template <class T>
KSFactor<T> KSFactor<T>::from_dense(KSPattern pattern, const HostMatrix<T>& dense,
                                    RealOf<T> tolerance) {
  pattern.validate();
  // A NaN or negative tolerance would skip the support check below without a word.
  require<NumericalError>(tolerance >= 0, "ks_factor: tolerance must be >= 0 (0: no support ",
                          "check), got ", tolerance);
  const auto [a, b, c, d] = pattern;
  require<ShapeError>(dense.rows() == pattern.rows() && dense.cols() == pattern.cols(),
                      "ks_factor: pattern ", pattern, " is ", pattern.rows(), "x", pattern.cols(),
                      ", the dense matrix is ", dense.rows(), "x", dense.cols());
  std::vector<T> values(static_cast<std::size_t>(pattern.nnz()));
  std::size_t next = 0;
  for (Index i = 0; i < a; ++i)
    for (Index k = 0; k < b; ++k)
      for (Index l = 0; l < c; ++l)
        for (Index j = 0; j < d; ++j)
          values[next++] = dense(i * b * d + k * d + j, i * c * d + l * d + j);
  if (tolerance > 0) {
    // (r, s) is on the support when both name the same (i, j) block.
    for (Index s = 0; s < dense.cols(); ++s) {
      for (Index r = 0; r < dense.rows(); ++r) {
        const bool on_support = r / (b * d) == s / (c * d) && r % d == s % d;
        require<PatternError>(on_support || std::abs(dense(r, s)) <= tolerance,
                              "ks_factor: entry (", r, ",", s, ") = ", dense(r, s),
                              " lies outside the support of pattern ", pattern, " (tolerance ",
                              tolerance, ")");
      }
    }
  }
  return KSFactor(pattern, std::move(values));
}

template <class T>
KSFactor<T> KSFactor<T>::transposed_copy(const KSFactor& factor, bool conjugate) {
  const auto [a, b, c, d] = factor.pattern();
  std::vector<T> values(static_cast<std::size_t>(factor.nnz()));
  std::size_t next = 0;
  for (Index i = 0; i < a; ++i)
    for (Index l = 0; l < c; ++l)
      for (Index k = 0; k < b; ++k)
        for (Index j = 0; j < d; ++j) {
          const T w = factor.value(i, k, l, j);
          values[next++] = conjugate ? strop::conj(w) : w;
        }
  return KSFactor(factor.pattern().transposed(), std::move(values));
}

namespace {
// Below this many multiply-adds a thread team costs more than it saves.
constexpr double kParallelWork = 1 << 16;
// Shortest j-run worth vectorising over in apply_by_columns.
constexpr Index kMinRun = 4;
// Tiles with a short inner dimension (butterflies: 2) are too small for GEMM packing to pay
// off; they take coefficient-based products instead.
constexpr Index kSmallInner = 8;

template <class T, class W, class XMap, class YMap>
void block_product(const W& w, const XMap& x, YMap&& y, T alpha, T beta) {
  // beta == 0 overwrites: NaNs in Y must not survive.
  if (w.cols() <= kSmallInner) {
    if (beta == T(0)) {
      y.noalias() = alpha * w.lazyProduct(x);
    } else {
      y = alpha * w.lazyProduct(x) + beta * y;
    }
  } else if (beta == T(0)) {
    y.noalias() = alpha * (w * x);
  } else {
    if (beta != T(1)) y *= beta;
    y.noalias() += alpha * (w * x);
  }
}

// Batch-size-last rows are contiguous: y_k = alpha sum_l w(k,l) x_l + beta y_k as
// vectorised row updates, each output row staying in cache while it accumulates.
template <class T, class W>
void block_product_rows(const W& w, ConstView<T> X, MatrixView<T> Y, T alpha, T beta) {
  using ConstRow = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;
  using Row = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
  for (Index k = 0; k < Y.rows; ++k) {
    Row y(Y.ptr(k, 0), Y.cols);
    if (beta == T(0)) {
      y.setZero();
    } else if (beta != T(1)) {
      y *= beta;
    }
    for (Index l = 0; l < X.rows; ++l)
      y += (alpha * w(k, l)) * ConstRow(X.ptr(l, 0), X.cols);
  }
}

template <class T, class W>
void tile_product(const W& w, ConstView<T> X, MatrixView<T> Y, T alpha, T beta) {
  if (w.cols() <= kSmallInner && X.col_stride == 1 && Y.col_stride == 1) {
    block_product_rows(w, X, Y, alpha, beta);
  } else {
    detail::with_eigen_maps(X, Y,
                            [&](const auto& x, auto y) { block_product(w, x, y, alpha, beta); });
  }
}

// Batch-size-first columns: for fixed (i,k,l) the d values w[i,k,l,:], the rows (i,k,:) of
// Y and the rows (i,l,:) of X are contiguous, so each signal's product vectorises over j.
template <class T>
void apply_by_columns(const KSPattern& p, const T* w, Op op, ConstView<T> X, MatrixView<T> Y,
                      T alpha, T beta, [[maybe_unused]] bool parallel) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  using ConstSegment = Eigen::Map<const Array>;
  const auto [a, b, c, d] = p;
  const bool transposed = op != Op::NoTrans;
  const Index out_group = transposed ? c : b;
  const Index in_group = transposed ? b : c;
#ifdef _OPENMP
#pragma omp parallel if (parallel)
#endif
  {
    Array sum(d);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (Index s = 0; s < X.cols; ++s) {
      const T* x = X.ptr(0, s);
      for (Index i = 0; i < a; ++i) {
        for (Index o = 0; o < out_group; ++o) {
          sum.setZero();
          for (Index n = 0; n < in_group; ++n) {
            const Index k = transposed ? n : o;
            const Index l = transposed ? o : n;
            const ConstSegment w_kl(w + ((i * b + k) * c + l) * d, d);
            const ConstSegment x_n(x + (i * in_group + n) * d, d);
            if (op == Op::Adjoint) {
              sum += w_kl.conjugate() * x_n;
            } else {
              sum += w_kl * x_n;
            }
          }
          Eigen::Map<Array> y(Y.ptr((i * out_group + o) * d, s), d);
          if (beta == T(0)) {
            y = alpha * sum;
          } else {
            y = alpha * sum + beta * y;
          }
        }
      }
    }
  }
}

}  // namespace

template <class T>
void KSFactor<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                  Context& ctx) const {
  if (X.space == MemorySpace::Device) return apply_device(op, X, Y, alpha, beta, ctx);
  const auto [a, b, c, d] = pattern();
  // Rows of K are grouped as (i,k,j), columns as (i,l,j); op(K) = K^T/K^H swaps the roles.
  const bool transposed = op != Op::NoTrans;
  const Index out_group = transposed ? c : b;
  const Index in_group = transposed ? b : c;
  const T* w = values().data();
  [[maybe_unused]] const bool parallel = double(nnz()) * double(X.cols) > kParallelWork;
  // Long contiguous j-runs (d) favour vectorising over j when signals are contiguous.
  if (d >= kMinRun && X.row_stride == 1 && Y.row_stride == 1) {
    return apply_by_columns(pattern(), w, op, X, Y, alpha, beta, parallel);
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (parallel)
#endif
  for (Index ij = 0; ij < a * d; ++ij) {
    const Index i = ij / d;
    const Index j = ij % d;
    // W_ij = w[i,:,:,j], a b x c matrix inside the 4-D array.
    const ConstView<T> block{w + i * b * c * d + j, b, c, c * d, d, MemorySpace::Host};
    const auto w_ij = eigen_map(block);
    const ConstView<T> x = X.row_slice(i * in_group * d + j, in_group, d);
    const MatrixView<T> y = Y.row_slice(i * out_group * d + j, out_group, d);
    switch (op) {
      case Op::NoTrans:
        tile_product(w_ij, x, y, alpha, beta);
        break;
      case Op::Trans:
        tile_product(w_ij.transpose(), x, y, alpha, beta);
        break;
      case Op::Adjoint:
        tile_product(w_ij.adjoint(), x, y, alpha, beta);
        break;
    }
  }
}

template <class T>
double KSFactor<T>::flops(Index batch) const {
  return detail::flops_per_fma<T>() * double(nnz()) * double(batch);
}

#define STROP_INSTANTIATE(T) template class KSFactor<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
