// The decode path's skinny products (blr_decode.hpp). A block owns a tile of W's columns
// (32 lanes x C adjacent columns) of one batch entry and walks all of k: the rows of Act
// come into shared memory in chunks of kChunk (as fp32), each of the block's 8 warps takes
// every 8th row of W in the chunk, so consecutive lanes read consecutive columns (whole
// memory segments) and every weight is read once. The warps' partial sums meet in shared
// memory. M (1, 4 or 16) bounds the tokens a thread accumulates: one token costs one FMA
// per weight, not 16.
#include <cstdint>

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

// The C weights W(kk, j0 ... j0 + C - 1) as fp32 (zero past the last column); with C = 4 and
// all four inside, one 8-byte load (the host checked the alignment).
template <class S, int C>
__device__ __forceinline__ void load_weights(const S* row, Index j0, Index cols, float (&w)[C]) {
  if constexpr (C == 4) {
    if (j0 + 3 < cols) {
      const uint2 q = *reinterpret_cast<const uint2*>(row + j0);
      const S* v = reinterpret_cast<const S*>(&q);
#pragma unroll
      for (int c = 0; c < 4; ++c)
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
    skinny_gemm_kernel(const SkinnyGemm g, Index col_tiles) {
  constexpr int kTileCols = 32 * C;
  __shared__ float act[kChunk][M];
  __shared__ float sums[M][kTileCols];
  const Index tile = blockIdx.x % col_tiles, e = blockIdx.x / col_tiles;
  const S* act_e = static_cast<const S*>(g.act) + entry_offset(g, e, g.act_stride, g.act_outer);
  const S* w_e = static_cast<const S*>(g.w) + entry_offset(g, e, g.w_stride, g.w_outer);
  S* c_e = static_cast<S*>(g.c) + entry_offset(g, e, g.c_stride, g.c_outer);
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  const Index j0 = tile * kTileCols + lane * C;
  const int tokens = int(g.tokens);

  float acc[M][C];
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int c = 0; c < C; ++c)
      acc[i][c] = 0.0f;

  for (Index k0 = 0; k0 < g.k; k0 += kChunk) {
    const int chunk = int(g.k - k0 < kChunk ? g.k - k0 : Index(kChunk));
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

  for (int q = int(threadIdx.x); q < M * kTileCols; q += kThreads)
    sums[q / kTileCols][q % kTileCols] = 0.0f;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int c = 0; c < C; ++c)
      atomicAdd(&sums[i][lane * C + c], acc[i][c]);
  __syncthreads();
  for (int q = int(threadIdx.x); q < tokens * kTileCols; q += kThreads) {
    const int i = q / kTileCols, jj = q % kTileCols;
    const Index j = tile * kTileCols + jj;
    if (j >= g.cols) continue;
    S* out = c_e + i * g.c_token_stride + j * g.c_col_stride;
    float v = g.alpha * sums[i][jj];
    if (g.beta != 0.0f) v += g.beta * float(load_value(out));
    store_value(out, v);
  }
}

template <class S, int C>
void launch_tokens(const SkinnyGemm& g, Index col_tiles, cudaStream_t stream) {
  const Index blocks = g.batch * col_tiles;
  require<DeviceError>(blocks < (Index(1) << 31), "decode path: too many blocks");
  if (g.tokens == 1) {
    skinny_gemm_kernel<S, 1, C><<<unsigned(blocks), kThreads, 0, stream>>>(g, col_tiles);
  } else if (g.tokens <= 4) {
    skinny_gemm_kernel<S, 4, C><<<unsigned(blocks), kThreads, 0, stream>>>(g, col_tiles);
  } else {
    skinny_gemm_kernel<S, 16, C><<<unsigned(blocks), kThreads, 0, stream>>>(g, col_tiles);
  }
  check_launch("skinny_gemm");
}

}  // namespace

template <class Storage>
void skinny_gemm(const SkinnyGemm& g, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<DeviceError>(g.tokens >= 1 && g.tokens <= kDecodeTokens,
                       "decode path: 1 to 16 tokens, not ", g.tokens);
  if (g.cols == 0 || g.batch == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  // Four columns per lane (8-byte loads) where W's rows stay 8-byte aligned and there are
  // blocks enough for every multiprocessor twice; else one column per lane (4x the blocks).
  const bool aligned = reinterpret_cast<std::uintptr_t>(g.w) % 8 == 0 && g.w_k_stride % 4 == 0 &&
                       g.w_stride % 4 == 0 && g.w_outer % 4 == 0;
  const Index wide_tiles = (g.cols + 127) / 128;
  if (aligned && g.batch * wide_tiles >= 2 * Index(multiprocessors()))
    return launch_tokens<S, 4>(g, wide_tiles, stream);
  launch_tokens<S, 1>(g, (g.cols + 31) / 32, stream);
}

template void skinny_gemm<half>(const SkinnyGemm&, Context&);
template void skinny_gemm<bfloat16>(const SkinnyGemm&, Context&);

}  // namespace strop::detail
