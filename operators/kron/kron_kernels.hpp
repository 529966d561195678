#pragma once
// Internal: the CUDA launches of the Kron-matmul engine (operators/kron/kron_kernels.cu).
// Views carry general strides: element (k, b) of an intermediate is at
// data[k*row_stride + b*col_stride], so one kernel serves both layouts.
#include <cstdint>
#include <span>

#include "strop/core/context.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop::detail {

// One sliced multiply: out[q*(K/P) + s, b] = sum_p G[q][p] in[s*P + p, b]; when `scale`,
// out = alpha * that + beta * out (out not read when beta == 0).
template <class T>
void kron_step(const KronFactorRef<T>& g, ConstView<T> in, MatrixView<T> out, T alpha, T beta,
               bool scale, Context& ctx);

// Several consecutive factors in one launch: `group` is G_lo..G_hi (applied hi first) on
// chunks of prod(P) contiguous features kept in shared memory.
template <class T>
void kron_fused(std::span<const KronFactorRef<T>> group, ConstView<T> in, MatrixView<T> out,
                T alpha, T beta, bool scale, Context& ctx);

// The same pass by the in-place kernel for equal square factors (kron_fused_square.cu), real
// types only; false (nothing launched) when that kernel does not take the pass
// (kron_square_chunks_per_block, features not contiguous, or a tile beyond the device's
// shared memory per block).
template <class T>
bool kron_fused_square(std::span<const KronFactorRef<T>> group, ConstView<T> in, MatrixView<T> out,
                       T alpha, T beta, bool scale, Context& ctx);

// Two 32 x 32 factors (the pair G_lo, G_hi, applied hi first) in one tensor-core pass on
// half/bfloat16 signals (kron_fused_pair16.cu); in and out packed batch-first and 16-byte
// aligned (kron_pair16_aligned), in.rows a multiple of 32768 (kron_pair16_fits).
template <ReducedPrecision Storage>
void kron_fused_pair16(std::span<const KronFactorRef<float>> pair, ConstView<Storage> in,
                       MatrixView<Storage> out, float alpha, float beta, bool scale, Context& ctx);

// Three 16 x 16 factors (applied last first) in one tensor-core pass on half/bfloat16
// signals (kron_fused_triple16.cu); in and out as for the pair, in.rows a multiple of 32768
// (kron_triple16_fits).
template <ReducedPrecision Storage>
void kron_fused_triple16(std::span<const KronFactorRef<float>> triple, ConstView<Storage> in,
                         MatrixView<Storage> out, float alpha, float beta, bool scale,
                         Context& ctx);

// Shuffle baseline pieces. out[n0][c][a][e] = in[n0][a][c][e] (scaled when `scale`).
template <class T>
void kron_permute(const T* in, T* out, Index n0, Index a, Index c, Index e, T alpha, T beta,
                  bool scale, Context& ctx);
// G written column-major (Q x P, leading dimension Q) for cuBLAS.
template <class T>
void kron_pack_factor(const KronFactorRef<T>& g, T* out, Context& ctx);
// G_lo ⊗ ... ⊗ G_hi (1 to kKronMaxFused factors) written column-major (prod Q x prod P).
template <class T>
void kron_merge_factors(std::span<const KronFactorRef<T>> group, T* out, Context& ctx);

// Whether a view is packed in `layout` (what cuBLAS's leading dimensions can describe).
template <class T>
bool kron_packed(const MatrixView<T>& v, Layout layout) {
  if (layout == Layout::ColMajor)
    return v.row_stride == 1 && (v.col_stride == v.rows || v.cols == 1);
  return v.col_stride == 1 && (v.row_stride == v.cols || v.rows == 1);
}

// Whether the 16-bit fused kernels (pair, triple) can read or write a view of 16-bit values
// with 16-byte copies:
// packed batch-first (features contiguous, signals rows apart), a 16-byte aligned address
// and signals a multiple of 8 values apart.
template <class T>
bool kron_pair16_aligned(const MatrixView<T>& v) {
  return kron_packed(v, Layout::ColMajor) && reinterpret_cast<std::uintptr_t>(v.data) % 16 == 0 &&
         (v.cols == 1 || v.col_stride % 8 == 0);
}

// Carves 256-byte aligned pieces out of a caller's work space (ShapeError when it is short).
struct KronCarver {
  char* next;
  char* end;
  template <class T>
  T* take(Index count) {
    auto addr = (reinterpret_cast<std::uintptr_t>(next) + 255) / 256 * 256;
    T* p = reinterpret_cast<T*>(addr);
    next = reinterpret_cast<char*>(p + count);
    require<ShapeError>(next <= end, "kron_matmul: work space too small");
    return p;
  }
};

// A factor as a cuBLAS operand: op(data) (leading dimension ld) is G^T, P x Q.
template <class T>
struct KronGemmFactor {
  const T* data = nullptr;
  Index ld = 0;
  bool transpose = false;  // CUBLAS_OP_T (or CUBLAS_OP_C when conjugate)
  bool conjugate = false;
};

// The operand of a GEMM pass on `group` (one factor, or a run merged into their Kronecker
// product): a single factor as it is when cuBLAS can read it in place (one unit stride, no
// conjugation it cannot express); otherwise packed or merged into `room` (prod P x prod Q
// elements).
template <class T>
KronGemmFactor<T> kron_gemm_factor(std::span<const KronFactorRef<T>> group, T* room, Context& ctx);

// One sliced multiply as one strided-batched cuBLAS GEMM: out = alpha * step(in) + beta * out
// for packed `in` (K x B) and `out` ((K/P)Q x B) in `layout`. T is one of the four scalar
// types (Compute = T) or half/bfloat16 (Compute = float, tensor cores, fp32 accumulation).
template <class T, class Compute>
void kron_gemm_step(const KronGemmFactor<T>& g, Index P, Index Q, const T* in, T* out, Index K,
                    Index B, Layout layout, Compute alpha, Compute beta, Context& ctx);

// The shuffle algorithm (operators/kron/kron_shuffle_cublas.cpp).
template <class T>
void kron_shuffle(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                  T alpha, T beta, void* workspace, std::size_t workspace_bytes, Context& ctx);

}  // namespace strop::detail
