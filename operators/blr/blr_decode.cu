// The decode path's skinny products (blr_decode.hpp). A block owns a tile of W's columns
// (32 lanes x C adjacent columns, one 8- or 16-byte load per lane and row) of one batch entry
// and a part of k: the rows of Act come into shared memory in chunks of kChunk (as fp32),
// each of the block's 8 warps takes every 8th row of W in the chunk, so consecutive lanes
// read consecutive columns (whole memory segments) and every weight is read once. The warps'
// partial sums meet in shared memory; the parts of k of one tile form a thread-block
// cluster and meet in its first block's (distributed shared memory), so a product with few
// columns (LowRank: one entry of r columns) still keeps every multiprocessor busy, in one
// launch. M (1, 4 or 16) bounds the tokens a thread accumulates: one token costs one FMA
// per weight, not 16.
#include <cooperative_groups.h>
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/blr/blr_decode.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = 128;  // rows of W (values of k) per shared-memory stage of Act

__device__ __forceinline__ Index entry_offset(const SkinnyGemm& g, Index e, Index stride,
                                              Index outer) {
  return g.inner > 0 ? (e / g.inner) * outer + (e % g.inner) * stride : e * stride;
}

// The C weights W(kk, j0 ... j0 + C - 1) as fp32 (zero past the last column); with C = 4 or
// 8 and all of them inside, one 8- or 16-byte load (the host checked the alignment).
template <class S, int C>
__device__ __forceinline__ void load_weights(const S* row, Index j0, Index cols, float (&w)[C]) {
  if constexpr (C == 4 || C == 8) {
    using Vector = std::conditional_t<C == 8, uint4, uint2>;
    if (j0 + C - 1 < cols) {
      const Vector q = *reinterpret_cast<const Vector*>(row + j0);
      const S* v = reinterpret_cast<const S*>(&q);
#pragma unroll
      for (int c = 0; c < C; ++c)
        w[c] = float(v[c]);
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < C; ++c)
    w[c] = j0 + c < cols ? load_value(row + j0 + c) : 0.0f;
}

template <class S, int M, int C>
__global__ void __launch_bounds__(kThreads)
    skinny_gemm_kernel(const SkinnyGemm g, Index col_tiles, int parts) {
  constexpr int kTileCols = 32 * C;
  __shared__ float act[kChunk][M];
  __shared__ float sums[M][kTileCols];
  // Block index: (entry, column tile, part of k); the parts of a tile form one cluster.
  const int part = int(blockIdx.x % unsigned(parts));
  const Index rest = blockIdx.x / unsigned(parts);
  const Index tile = rest % col_tiles, e = rest / col_tiles;
  const S* act_e = static_cast<const S*>(g.act) + entry_offset(g, e, g.act_stride, g.act_outer);
  const S* w_e = static_cast<const S*>(g.w) + entry_offset(g, e, g.w_stride, g.w_outer);
  S* c_e = static_cast<S*>(g.c) + entry_offset(g, e, g.c_stride, g.c_outer);
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  const Index j0 = tile * kTileCols + lane * C;
  const int tokens = int(g.tokens);
  const Index per_part = (g.k + parts - 1) / parts;
  const Index k_begin = part * per_part;
  const Index k_end = k_begin + per_part < g.k ? k_begin + per_part : g.k;

  float acc[M][C];
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int c = 0; c < C; ++c)
      acc[i][c] = 0.0f;

  for (Index k0 = k_begin; k0 < k_end; k0 += kChunk) {
    const int chunk = int(k_end - k0 < kChunk ? k_end - k0 : Index(kChunk));
    __syncthreads();  // the previous chunk is consumed
    for (int q = int(threadIdx.x); q < chunk * M; q += kThreads) {
      const int kk = q % chunk, i = q / chunk;  // consecutive threads: consecutive kk
      act[kk][i] =
          i < tokens
              ? float(load_value(act_e + i * g.act_token_stride + (k0 + kk) * g.act_k_stride))
              : 0.0f;
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = warp; kk < chunk; kk += kWarps) {
      float w[C];
      load_weights<S, C>(w_e + (k0 + kk) * g.w_k_stride, j0, g.cols, w);
#pragma unroll
      for (int i = 0; i < M; ++i) {
        const float a = act[kk][i];
#pragma unroll
        for (int c = 0; c < C; ++c)
          acc[i][c] += a * w[c];
      }
    }
  }

  // The warps' sums meet in this block's shared memory, the parts' in the cluster's first
  // block (distributed shared memory), which writes C.
  for (int q = int(threadIdx.x); q < M * kTileCols; q += kThreads)
    sums[q / kTileCols][q % kTileCols] = 0.0f;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int c = 0; c < C; ++c)
      atomicAdd(&sums[i][lane * C + c], acc[i][c]);
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  cluster.sync();
  if (part == 0) {
    for (int q = int(threadIdx.x); q < tokens * kTileCols; q += kThreads) {
      const int i = q / kTileCols, jj = q % kTileCols;
      const Index j = tile * kTileCols + jj;
      if (j >= g.cols) continue;
      float total = sums[i][jj];
      for (int r = 1; r < parts; ++r)
        total += cluster.map_shared_rank(&sums[0][0], r)[i * kTileCols + jj];
      S* out = c_e + i * g.c_token_stride + j * g.c_col_stride;
      float v = g.alpha * total;
      if (g.beta != 0.0f) v += g.beta * float(load_value(out));
      store_value(out, v);
    }
  }
  cluster.sync();  // the other parts' shared memory stays until the first block has read it
}

// C columns per lane: 8 (16-byte loads) for up to 4 tokens, 4 (8-byte loads) for up to 16,
// where W's rows stay aligned to that; else 1 (scalar loads).
template <class S, int M, int C>
void launch_kernel(const SkinnyGemm& g, Index col_tiles, cudaStream_t stream) {
  // Parts of k per column tile (a cluster of at most 8 blocks): enough blocks for every
  // multiprocessor twice, and at least kChunk values of k per part.
  const Index tiles = g.batch * col_tiles;
  const Index wanted = (2 * Index(multiprocessors()) + tiles - 1) / tiles;
  const Index most = std::max<Index>(1, g.k / kChunk);
  const int parts = int(std::clamp<Index>(std::min(wanted, most), 1, 8));
  const Index blocks = tiles * parts;
  require<DeviceError>(blocks < (Index(1) << 31), "decode path: too many blocks");
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(blocks));
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(parts);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  check_cuda(cudaLaunchKernelEx(&config, skinny_gemm_kernel<S, M, C>, g, col_tiles, parts),
             "skinny_gemm launch");
  check_launch("skinny_gemm");
}

template <class S, int M, int C>
void launch_columns(const SkinnyGemm& g, bool aligned, cudaStream_t stream) {
  if (aligned) return launch_kernel<S, M, C>(g, (g.cols + 32 * C - 1) / (32 * C), stream);
  launch_kernel<S, M, 1>(g, (g.cols + 31) / 32, stream);
}

}  // namespace

template <class Storage>
void skinny_gemm(const SkinnyGemm& g, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<DeviceError>(g.tokens >= 1 && g.tokens <= kDecodeTokens,
                       "decode path: 1 to 16 tokens, not ", g.tokens);
  if (g.cols == 0 || g.batch == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto aligned_to = [&](Index values) {
    return reinterpret_cast<std::uintptr_t>(g.w) % (2 * values) == 0 &&
           g.w_k_stride % values == 0 && g.w_stride % values == 0 && g.w_outer % values == 0;
  };
  if (g.tokens == 1) return launch_columns<S, 1, 8>(g, aligned_to(8), stream);
  if (g.tokens <= 4) return launch_columns<S, 4, 8>(g, aligned_to(8), stream);
  launch_columns<S, 16, 4>(g, aligned_to(4), stream);
}

template void skinny_gemm<half>(const SkinnyGemm&, Context&);
template void skinny_gemm<bfloat16>(const SkinnyGemm&, Context&);

}  // namespace strop::detail
