// BlastKernels on the host: Eigen on column-major maps, threads over the batch.
#include <Eigen/Cholesky>
#include <vector>

#include "factorize/blast/blast_kernels.hpp"
#include "operators/blr/blr_support.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using Strided = Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>>;
template <class T>
using ConstStrided = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;
template <class T>
using Vector = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstVector = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;

// f(op(m)) with the operation applied as an Eigen expression (no copy).
template <class M, class F>
void with_op(Op op, const M& m, const F& f) {
  switch (op) {
    case Op::NoTrans:
      return f(m);
    case Op::Trans:
      return f(m.transpose());
    case Op::Adjoint:
      return f(m.adjoint());
  }
}

template <class T>
class CpuBlastKernels final : public BlastKernels<T> {
 public:
  explicit CpuBlastKernels(const BlastShape& shape) : s_(shape) {}

  MemorySpace space() const override { return MemorySpace::Host; }

  void gemm(Op op_a, Op op_b, Index m, Index n, Index k, T alpha, Batched<const T*> a,
            Batched<const T*> b, T beta, Batched<T*> c, Index batch) override {
    const Index a_rows = op_a == Op::NoTrans ? m : k, a_cols = op_a == Op::NoTrans ? k : m;
    const Index b_rows = op_b == Op::NoTrans ? k : n, b_cols = op_b == Op::NoTrans ? n : k;
    parallel_for(batch, double(batch) * double(m) * double(n) * double(k), [&](Index t) {
      const ConstStrided<T> at(a.data + t * a.stride, a_rows, a_cols, Eigen::OuterStride<>(a.ld));
      const ConstStrided<T> bt(b.data + t * b.stride, b_rows, b_cols, Eigen::OuterStride<>(b.ld));
      Strided<T> ct(c.data + t * c.stride, m, n, Eigen::OuterStride<>(c.ld));
      with_op(op_a, at, [&](const auto& x) {
        with_op(op_b, bt, [&](const auto& y) { gemm_update(x, y, ct, alpha, beta); });
      });
    });
  }

  void scale_left_factor(const T* B, const T* d, T* b_bar) override {
    const Index M = s_.rows, r = s_.rank, p = s_.block_rows();
    const ConstStrided<T> b(B, M, r, Eigen::OuterStride<>(M));
    parallel_for(s_.col_blocks * s_.row_blocks, double(M * r * s_.col_blocks), [&](Index ji) {
      const Index j = ji / s_.row_blocks, i = ji % s_.row_blocks;
      Strided<T> out(b_bar + j * M * r + i * p, p, r, Eigen::OuterStride<>(M));
      out.noalias() = b.middleRows(i * p, p) * diagonal(d, i, j).asDiagonal();
    });
  }

  void scale_right_factor(const T* C, const T* d, T* c_bar) override {
    const Index N = s_.cols, r = s_.rank, q = s_.block_cols();
    parallel_for(s_.row_blocks * s_.col_blocks, double(N * r * s_.row_blocks), [&](Index ij) {
      const Index i = ij / s_.col_blocks, j = ij % s_.col_blocks;
      const ConstStrided<T> cj(C + j * q * r, r, q, Eigen::OuterStride<>(r));
      Strided<T> out(c_bar + i * r * N + j * q * r, r, q, Eigen::OuterStride<>(r));
      out.noalias() = diagonal(d, i, j).asDiagonal() * cj;
    });
  }

  void weighted_gram_sum(const T* grams, const T* d, bool over_col_blocks, T* out) override {
    const Index r = s_.rank;
    const Index outputs = over_col_blocks ? s_.row_blocks : s_.col_blocks;
    const Index terms = over_col_blocks ? s_.col_blocks : s_.row_blocks;
    parallel_for(outputs, double(outputs * terms * r * r), [&](Index x) {
      Strided<T> o(out + x * r * r, r, r, Eigen::OuterStride<>(r));
      o.setZero();
      for (Index y = 0; y < terms; ++y) {
        const ConstStrided<T> g(grams + y * r * r, r, r, Eigen::OuterStride<>(r));
        const auto w = over_col_blocks ? diagonal(d, x, y) : diagonal(d, y, x);
        if (over_col_blocks) {
          o.noalias() += w.asDiagonal() * g * w.conjugate().asDiagonal();
        } else {
          o.noalias() += w.conjugate().asDiagonal() * g * w.asDiagonal();
        }
      }
    });
  }

  void hadamard_gram(const T* F, const T* G, T* k) override {
    const Index r = s_.rank, cb = s_.col_blocks;
    parallel_for(s_.row_blocks * cb, double(s_.row_blocks * cb * r * r), [&](Index ij) {
      const ConstStrided<T> f(F + (ij / cb) * r * r, r, r, Eigen::OuterStride<>(r));
      const ConstStrided<T> g(G + (ij % cb) * r * r, r, r, Eigen::OuterStride<>(r));
      Strided<T>(k + ij * r * r, r, r, Eigen::OuterStride<>(r)) = f.cwiseProduct(g.conjugate());
    });
  }

  void diagonal_dots(const T* z, const T* C, T* g) override {
    const Index r = s_.rank, N = s_.cols, q = s_.block_cols(), cb = s_.col_blocks;
    parallel_for(s_.row_blocks * cb, double(s_.row_blocks * N * r), [&](Index ij) {
      const Index i = ij / cb, j = ij % cb;
      const ConstStrided<T> zij(z + i * r * N + j * q * r, r, q, Eigen::OuterStride<>(r));
      const ConstStrided<T> cj(C + j * q * r, r, q, Eigen::OuterStride<>(r));
      Vector<T>(g + ij * r, r) = zij.cwiseProduct(cj.conjugate()).rowwise().sum();
    });
  }

  void solve_shifted_hpd(SolveSide side, Index n, Index nrhs, T* K, Index batch, double shift,
                         Batched<T*> x) override {
    const double work = double(batch) * double(n) * double(n) * double(n + nrhs);
    // No exception may leave a parallel region: failures are collected, then reported.
    std::vector<char> failed(static_cast<std::size_t>(batch), 0);
    parallel_for(batch, work, [&](Index t) {
      Strided<T> kt(K + t * n * n, n, n, Eigen::OuterStride<>(n));
      kt.diagonal().array() += T(shift);
      Eigen::LLT<Eigen::Ref<Matrix<T>>> llt(kt);
      if (llt.info() != Eigen::Success) {
        failed[static_cast<std::size_t>(t)] = 1;
        return;
      }
      if (side == SolveSide::left) {
        Strided<T> xt(x.data + t * x.stride, n, nrhs, Eigen::OuterStride<>(x.ld));
        llt.solveInPlace(xt);
      } else {
        // X K^{-1} = (K^{-1} X^H)^H for Hermitian K.
        Strided<T> xt(x.data + t * x.stride, nrhs, n, Eigen::OuterStride<>(x.ld));
        Matrix<T> adjoint = xt.adjoint();
        llt.solveInPlace(adjoint);
        xt = adjoint.adjoint();
      }
    });
    for (Index t = 0; t < batch; ++t)
      require<NumericalError>(!failed[static_cast<std::size_t>(t)],
                              "factorize_blast: preconditioner ", t, " (", n, "x", n, ", shift ",
                              shift, ") is not positive definite");
  }

  void axpy(Index count, T alpha, const T* x, T* y) override {
    Vector<T>(y, count) += alpha * ConstVector<T>(x, count);
  }

  double norm(Index count, const T* x) override { return double(ConstVector<T>(x, count).norm()); }

 private:
  ConstVector<T> diagonal(const T* d, Index i, Index j) const {
    return ConstVector<T>(d + (i * s_.col_blocks + j) * s_.rank, s_.rank);
  }

  BlastShape s_;
};

}  // namespace

template <class T>
std::unique_ptr<BlastKernels<T>> make_blast_kernels_cpu(const BlastShape& shape) {
  return std::make_unique<CpuBlastKernels<T>>(shape);
}

#define STROP_INSTANTIATE(T) \
  template std::unique_ptr<BlastKernels<T>> make_blast_kernels_cpu(const BlastShape&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
