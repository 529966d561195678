#pragma once
// Internal: the CUDA launches of the Kron-matmul engine (operators/kron/kron_kernels.cu).
// Views carry general strides: element (k, b) of an intermediate is at
// data[k*row_stride + b*col_stride], so one kernel serves both layouts.
#include <span>

#include "strop/core/context.hpp"
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

// Shuffle baseline pieces. out[n0][c][a][e] = in[n0][a][c][e] (scaled when `scale`).
template <class T>
void kron_permute(const T* in, T* out, Index n0, Index a, Index c, Index e, T alpha, T beta,
                  bool scale, Context& ctx);
// G written column-major (Q x P, leading dimension Q) for cuBLAS.
template <class T>
void kron_pack_factor(const KronFactorRef<T>& g, T* out, Context& ctx);

// The shuffle algorithm (operators/kron/kron_shuffle_cublas.cpp).
template <class T>
void kron_shuffle(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                  T alpha, T beta, void* workspace, std::size_t workspace_bytes, Context& ctx);

}  // namespace strop::detail
