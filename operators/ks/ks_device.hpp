#pragma once
// Internal: the GPU paths of KSFactor and KSChain (operators/ks/*.cu, *_cuda.cpp).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operators/ks/ks_mma_tile.hpp"
#include "strop/core/buffer.hpp"
#include "strop/core/context.hpp"
#include "strop/core/error.hpp"
#include "strop/core/op.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/ks_algorithm.hpp"
#include "strop/operators/ks_pattern.hpp"

namespace strop::detail {

// Device pointers to a factor's values in the two orders the kernels read.
template <class T>
struct KSDeviceValues {
  const T* akld = nullptr;   // (a, b, c, d): the storage order, read by the fused kernel
  const T* adbc = nullptr;   // (a, d, b, c): one row-major b x c block per group, for GEMMs
  const T* dense = nullptr;  // the materialised rows() x cols() column-major matrix, or null
};

// The grid of the fused kernels, whose blocks own tk outputs x tj groups x tn signals of one
// i: x runs over (i, j tile, k tile) with k fastest (blocks in flight share their X rows
// in L2), y over the signal tiles. DeviceError past CUDA's grid limits.
struct GroupTileGrid {
  Index k_tiles, j_tiles;
  unsigned x, y;
};
inline GroupTileGrid group_tile_grid(const KSPattern& p, Index out_group, Index tk, Index tj,
                                     Index batch, Index tn, const char* kernel) {
  const auto ceil_div = [](Index a, Index b) { return (a + b - 1) / b; };
  GroupTileGrid g{ceil_div(out_group, tk), ceil_div(p.d, tj), 0, 0};
  const Index blocks_x = p.a * g.k_tiles * g.j_tiles;
  const Index blocks_y = ceil_div(batch, tn);
  require<DeviceError>(blocks_x < (Index(1) << 31) && blocks_y <= 65535, kernel,
                       ": grid too large for pattern ", to_string(p), " and batch ", batch);
  g.x = static_cast<unsigned>(blocks_x);
  g.y = static_cast<unsigned>(blocks_y);
  return g;
}

// The tuning-cache key of one application (strop/core/tuning.hpp): GPU, dtype, op, the two
// layouts, batch and pattern.
template <class T, class U>
std::string ks_tuning_key(const KSPattern& p, std::string_view dtype, Op op, const MatrixView<T>& X,
                          const MatrixView<U>& Y, Context& ctx) {
  return concat("ks|", device_name(ctx.device()), "|", dtype, "|", to_string(op),
                "|X=", to_string(layout_of(X)), "|Y=", to_string(layout_of(Y)), "|B=", X.cols, "|",
                p.a, ",", p.b, ",", p.c, ",", p.d);
}

// Y = alpha op(K) X + beta Y on device views with the given algorithm (never Auto).
template <class T>
void ks_fused_apply(const KSPattern& p, const T* w_abcd, Op op, ConstView<T> X, MatrixView<T> Y,
                    T alpha, T beta, Context& ctx);
// Also for half/bfloat16 (tensor cores, fp32 accumulation, alpha and beta).
template <class T>
void ks_grouped_gemm_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X,
                           MatrixView<T> Y, ComputeScalar<T> alpha, ComputeScalar<T> beta,
                           bool permute, Context& ctx);

// Blocks of at most 8 x 8 (butterflies, radix-4/8 stages): the fused kernel's register-only
// path (ks_fused.cu), which is bound by memory traffic. For half/bfloat16 signals it reads
// the float values (the (a, b, c, d) order) and computes in fp32.
bool ks_small_blocks(const KSPattern& p);
template <class Storage>
void ks_small_blocks_apply(const KSPattern& p, const float* w_abcd, Op op, ConstView<Storage> X,
                           MatrixView<Storage> Y, float alpha, float beta, Context& ctx);

// The tensor-core kernel for half/bfloat16 signals (ks_mma.cu), any pattern, op, layout and
// batch: w_op holds the values rounded to Storage as [a][d][out][in] for this op (in
// contiguous: the (a, d, b, c) order for NoTrans, (a, d, c, b) for Trans and Adjoint).
// `tile`: a configuration of ks_mma_tile.hpp, or none for the heuristic's.
template <class Storage>
void ks_mma_apply(const KSPattern& p, const Storage* w_op, Op op, ConstView<Storage> X,
                  MatrixView<Storage> Y, float alpha, float beta,
                  const std::optional<KSMmaTile>& tile, Context& ctx);
// The pipelined kernel for a `pipelined` tile (ks_mma_pipelined.cu); false, with nothing
// launched, where its requirements (batch-first, aligned, d % tj == 0, in % 8 == 0) do not
// hold.
template <class Storage>
bool ks_mma_pipelined_apply(const KSPattern& p, const Storage* w_op, Op op, ConstView<Storage> X,
                            MatrixView<Storage> Y, float alpha, float beta, const KSMmaTile& tile,
                            Context& ctx);

// SmallBatch (ks_small_batch.cu): w_adbc in the grouped (a, d, b, c) order.
template <class T>
void ks_small_batch_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X,
                          MatrixView<T> Y, T alpha, T beta, Context& ctx);

// The fused multi-factor kernel (ks_chain_fused.cu): chains of at most kMaxChainFactors
// square-block factors (b = c <= kMaxChainRadix, all n x n) whose tile of signals fits in
// shared memory, with the chain's weights not much more traffic than the signals.
inline constexpr int kMaxChainFactors = 32;
inline constexpr int kMaxChainRadix = 16;
bool ks_chain_fusable(const std::vector<KSPattern>& patterns, std::size_t scalar_bytes);
// Y = alpha op(K_1 ... K_L) X + beta Y in one kernel; w_packed holds the factors' values
// one after the other, each in its (a, b, c, d) storage order. DeviceError unless fusable.
template <class T>
void ks_chain_fused_apply(const std::vector<KSPattern>& patterns, const T* w_packed, Op op,
                          ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx);
// The same for half/bfloat16 signals through a float chain: the tile in fp32, each output
// rounded once (the tile's size is that of float signals).
template <ReducedPrecision Storage>
void ks_chain_fused_apply(const std::vector<KSPattern>& patterns, const float* w_packed, Op op,
                          ConstView<Storage> X, MatrixView<Storage> Y, float alpha, float beta,
                          Context& ctx);

}  // namespace strop::detail
