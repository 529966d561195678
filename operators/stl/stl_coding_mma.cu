// Tensor-core encode and decode of a Strassen-Tile layer for 16-bit signals (half, bfloat16)
// with t = 4, for the steps path's common case: X or Y with contiguous features (ColMajor),
// the colours with the feature tiles fastest, 32 | feature tiles. Both are products with a
// small coefficient matrix,
//   encode  colours (r x pairs) = E_X (r x 16)  tiles (16 x pairs),
//   decode  tiles (16 x pairs)  = D^T (16 x r)  colours (r x pairs),
// and bound by memory; the scalar kernels (stl_kernels.cu) spend r x 16 fp32 multiply-adds per
// pair, which kept the encode at 81 % of the SM's issue rate and 65 % of the copy rate on the
// H100 (ncu, n = 8192, r = 32). Here a warp takes 32 pairs (one signal tile, 32 feature tiles:
// 4 x 256 contiguous bytes of X or Y, and a 64-byte run of each colour), stages them through
// its own shared memory with 16-byte coalesced loads and stores, and multiplies with
// m16n8k16 products. (A first version fed the fragments straight from global memory: 2-byte
// gathers and 16-byte partial-sector stores made it 1.5x slower than the scalar kernels.)
//
// The 16 values of a tile are ordered so that a 32-bit fragment register holds neighbouring
// features: position kappa = f + 4 i for the encode's k; for the decode's m, rows rho and
// rho + 8 are features f, f + 1 of one signal. The fp32 coefficients enter as the sum of 2
// (half) or 3 (bfloat16) 16-bit parts, so each product carries 22-24 bits of every coefficient
// and the fp32 sums match the scalar kernels' before the one rounding to 16 bits.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/stl/stl_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = 128, kWarps = kThreads / 32;
constexpr int kPairs = int(kStlCodingPairsPerWarp);         // pairs per warp task
constexpr int kMaxRankTiles = int(kStlCodingMaxRank / 16);  // 16-row tiles of a rank
// A warp's shared memory: the tile of X (16-bit) or of Y (fp32: alpha and beta are applied
// before the one rounding), then the colours (16-bit), each row padded against bank conflicts.
constexpr int kTilePitch = 160;    // halves per signal row of X's tile (128 + padding)
constexpr int kOutputPitch = 132;  // floats per signal row of Y's tile (128 + padding)
constexpr int kColourPitch = 40;   // halves per staged colour row (32 + padding)
constexpr int kColourOffset = 4 * kOutputPitch * 4;  // bytes, after the larger tile
constexpr int kWarpBytes = kColourOffset + int(kStlCodingMaxRank) * kColourPitch * 2;
static_assert(4 * kTilePitch * 2 <= kColourOffset && kColourOffset % 16 == 0);

template <class D>
constexpr int kTerms = std::is_same_v<D, __half> ? 2 : 3;

// The lane's A fragment of the 16 x 16 tile at (row0, col0) of coef(row, col), as `Terms`
// 16-bit parts whose sum is the fp32 value (each part the rounding of what the previous ones
// left).
template <class D, int Terms, class Coef>
__device__ __forceinline__ void coefficient_fragment(uint32_t (&a)[Terms][4], const Coef& coef,
                                                     int row0, int col0) {
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int row = row0 + g + 8 * (j & 1), col = col0 + 2 * t + 8 * (j >> 1);
    float lo = coef(row, col), hi = coef(row, col + 1);
#pragma unroll
    for (int term = 0; term < Terms; ++term) {
      a[term][j] = pack(D{}, lo, hi);
      const float2 rounded = unpack(D{}, a[term][j]);
      lo -= rounded.x;
      hi -= rounded.y;
    }
  }
}

// Tile value i + 4 f (the coefficients' order) at the encode's k position kappa = f + 4 i.
__device__ __forceinline__ int encode_value(int kappa) {
  return kappa / 4 + 4 * (kappa % 4);
}
// Tile value at the decode's m position rho: signal rho % 4, feature 2 ((rho % 8) / 4) + rho / 8.
__device__ __forceinline__ int decode_value(int rho) {
  return rho % 4 + 4 * (2 * ((rho % 8) / 4) + rho / 8);
}

struct CodingArgs {
  int rank;
  const float* coefficients;  // r x 16 row-major (the encoder or the decoder)
  const void* in;
  void* out;
  Index batch_stride;  // X's or Y's column stride (elements)
  Index batch;
  Index feature_tiles;  // a multiple of kPairs
  Index pairs;
  float alpha, beta;  // decode only
};

// This warp's shared memory: the tile (4 signal rows of 128 features) and the colours (rank
// rows of 32 pairs).
__device__ __forceinline__ unsigned char* warp_stage(unsigned char (&stage)[kWarps][kWarpBytes]) {
  return stage[threadIdx.x / 32];
}
__device__ __forceinline__ uint16_t* staged_colours(unsigned char* stage) {
  return reinterpret_cast<uint16_t*>(stage + kColourOffset);
}

// Rows [0, rows) of the staged colours to or from global memory (row p at colours + p pairs +
// e0): 64 bytes a row, four lanes a row, eight rows per instruction.
template <bool ToShared>
__device__ __forceinline__ void move_colours(uint16_t* staged, uint16_t* colours, Index pairs,
                                             Index e0, int rows) {
  const int lane = int(threadIdx.x % 32);
  for (int p = lane / 4; p < rows; p += 8) {
    uint4* shared = reinterpret_cast<uint4*>(staged + p * kColourPitch + 8 * (lane % 4));
    uint4* global = reinterpret_cast<uint4*>(colours + p * pairs + e0 + 8 * (lane % 4));
    if constexpr (ToShared)
      *shared = *global;
    else
      *global = *shared;
  }
}

template <class D>
__global__ void __launch_bounds__(kThreads) stl_encode_mma_kernel(const CodingArgs a) {
  constexpr int Terms = kTerms<D>;
  __shared__ __align__(16) unsigned char stage[kWarps][kWarpBytes];
  auto* tile = reinterpret_cast<uint16_t*>(warp_stage(stage));
  uint16_t* staged = staged_colours(warp_stage(stage));
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int tiles = (a.rank + 15) / 16;
  auto coef = [&](int p, int kappa) {
    return p < a.rank ? a.coefficients[p * 16 + encode_value(kappa)] : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][Terms][4] = {};
#pragma unroll
  for (int m = 0; m < kMaxRankTiles; ++m)
    if (m < tiles) coefficient_fragment<D, Terms>(frag[m], coef, 16 * m, 0);
  const auto* x = static_cast<const uint16_t*>(a.in);
  auto* colours = static_cast<uint16_t*>(a.out);
  const Index tasks = a.pairs / kPairs, warps = Index(gridDim.x) * kWarps;
  for (Index task = blockIdx.x * Index(kWarps) + threadIdx.x / 32; task < tasks; task += warps) {
    const Index e0 = task * kPairs, I = e0 / a.feature_tiles, F0 = e0 % a.feature_tiles;
    // The tile: signals 4 I + i, features 4 F0 ... 4 F0 + 127 (zeros beyond the batch).
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int c = lane + 32 * j, i = c / 16, q = c % 16;
      const Index s = 4 * I + i;
      uint4 v = {0, 0, 0, 0};
      if (s < a.batch) v = *reinterpret_cast<const uint4*>(x + s * a.batch_stride + 4 * F0 + 8 * q);
      *reinterpret_cast<uint4*>(tile + i * kTilePitch + 8 * q) = v;
    }
    __syncwarp();
    // B fragments: kappa = 2 t, 2 t + 1 (signal t / 2, features 2 (t % 2) and the next) and
    // kappa + 8 (signal t / 2 + 2) of pair 8 u + g.
    uint32_t b[4][2];
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        b[u][h] = *reinterpret_cast<const uint32_t*>(tile + (t / 2 + 2 * h) * kTilePitch +
                                                     4 * (8 * u + g) + 2 * (t % 2));
#pragma unroll
    for (int m = 0; m < kMaxRankTiles; ++m) {
      if (m >= tiles) break;
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int term = 0; term < Terms; ++term)
          mma_add(D{}, d, frag[m][term], b[u][0], b[u][1], d);
        const int p = 16 * m + g, n = 8 * u + 2 * t;
        *reinterpret_cast<uint32_t*>(staged + p * kColourPitch + n) = pack(D{}, d[0], d[1]);
        *reinterpret_cast<uint32_t*>(staged + (p + 8) * kColourPitch + n) = pack(D{}, d[2], d[3]);
      }
    }
    __syncwarp();
    move_colours<false>(staged, colours, a.pairs, e0, a.rank);
    __syncwarp();  // the stage is refilled by the next task
  }
}

template <class D>
__global__ void __launch_bounds__(kThreads) stl_decode_mma_kernel(const CodingArgs a) {
  constexpr int Terms = kTerms<D>;
  __shared__ __align__(16) unsigned char stage[kWarps][kWarpBytes];
  auto* tile = reinterpret_cast<float*>(warp_stage(stage));
  uint16_t* staged = staged_colours(warp_stage(stage));
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int ktiles = (a.rank + 15) / 16;
  auto coef = [&](int rho, int p) {
    return p < a.rank ? a.coefficients[p * 16 + decode_value(rho)] : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][Terms][4] = {};
#pragma unroll
  for (int k = 0; k < kMaxRankTiles; ++k)
    if (k < ktiles) coefficient_fragment<D, Terms>(frag[k], coef, 0, 16 * k);
  // Colour rows rank ... 16 ktiles - 1 are read by the products and never loaded: zeros.
  for (int i = lane; i < (16 * ktiles - a.rank) * kColourPitch; i += 32)
    staged[a.rank * kColourPitch + i] = 0;
  const auto* colours = static_cast<const uint16_t*>(a.in);
  auto* y = static_cast<uint16_t*>(a.out);
  const bool read_y = a.beta != 0.0f;
  const Index tasks = a.pairs / kPairs, warps = Index(gridDim.x) * kWarps;
  for (Index task = blockIdx.x * Index(kWarps) + threadIdx.x / 32; task < tasks; task += warps) {
    const Index e0 = task * kPairs, I = e0 / a.feature_tiles, F0 = e0 % a.feature_tiles;
    move_colours<true>(staged, const_cast<uint16_t*>(colours), a.pairs, e0, a.rank);
    __syncwarp();
#pragma unroll
    for (int u = 0; u < 4; u += 2) {
      // B fragments of pairs 8 u ... 8 u + 15 by ldmatrix .trans: matrix m = lane / 8 holds
      // colours 16 k + 8 (m % 2) ... (its rows) of pairs 8 (u + m / 2) ... (its columns).
      uint32_t b[kMaxRankTiles][4] = {};
#pragma unroll
      for (int k = 0; k < kMaxRankTiles; ++k) {
        if (k >= ktiles) break;
        const int m = lane / 8, row = 16 * k + 8 * (m % 2) + lane % 8;
        load_matrices_x4_trans(b[k], staged + row * kColourPitch + 8 * (u + m / 2));
      }
#pragma unroll
      for (int v = 0; v < 2; ++v) {
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < kMaxRankTiles; ++k) {
          if (k >= ktiles) break;
#pragma unroll
          for (int term = 0; term < Terms; ++term)
            mma_add(D{}, d, frag[k][term], b[k][2 * v], b[k][2 * v + 1], d);
        }
        // Rows g, g + 8: features f, f + 1 of signal g % 4 (f = 2 (g / 4)), pairs n, n + 1.
        const int n = 8 * (u + v) + 2 * t, i = g % 4, f = 2 * (g / 4);
        *reinterpret_cast<float2*>(tile + i * kOutputPitch + 4 * n + f) = float2{d[0], d[2]};
        *reinterpret_cast<float2*>(tile + i * kOutputPitch + 4 * (n + 1) + f) = float2{d[1], d[3]};
      }
    }
    __syncwarp();
    // Y = alpha tile + beta Y for signals 4 I + i < batch, features 4 F0 ... 4 F0 + 127.
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int c = lane + 32 * j, i = c / 16, q = c % 16;
      const Index s = 4 * I + i;
      if (s >= a.batch) continue;
      const float4 lo = *reinterpret_cast<const float4*>(tile + i * kOutputPitch + 8 * q);
      const float4 hi = *reinterpret_cast<const float4*>(tile + i * kOutputPitch + 8 * q + 4);
      uint4* target = reinterpret_cast<uint4*>(y + s * a.batch_stride + 4 * F0 + 8 * q);
      const uint4 old = read_y ? *target : uint4{0, 0, 0, 0};
      const float2 in[4] = {{lo.x, lo.y}, {lo.z, lo.w}, {hi.x, hi.y}, {hi.z, hi.w}};
      const uint32_t before[4] = {old.x, old.y, old.z, old.w};
      uint32_t result[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 v = in[k];
        v.x *= a.alpha;
        v.y *= a.alpha;
        if (read_y) {
          const float2 o = unpack(D{}, before[k]);
          v.x = fmaf(a.beta, o.x, v.x);
          v.y = fmaf(a.beta, o.y, v.y);
        }
        result[k] = pack(D{}, v.x, v.y);
      }
      *target = uint4{result[0], result[1], result[2], result[3]};
    }
    __syncwarp();  // the stage is refilled by the next task
  }
}

}  // namespace

template <class Storage>
void stl_encode_mma(Index rank, const float* encoder, ConstView<Storage> X, Storage* colours,
                    const StlColourLayout& layout, Context& ctx) {
  using D = DeviceScalar<Storage>;
  const CodingArgs a{
      int(rank),      encoder, X.data, colours, X.col_stride, X.cols, layout.feature_tiles,
      layout.pairs(), 1.0f,    0.0f};
  const Index blocks = std::min<Index>((a.pairs / kPairs + kWarps - 1) / kWarps,
                                       resident_blocks<stl_encode_mma_kernel<D>>(kThreads));
  stl_encode_mma_kernel<D>
      <<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(a);
  check_launch("stl_encode_mma_kernel");
}

template <class Storage>
void stl_decode_mma(Index rank, const float* decoder, const Storage* colours,
                    const StlColourLayout& layout, MatrixView<Storage> Y, float alpha, float beta,
                    Context& ctx) {
  using D = DeviceScalar<Storage>;
  const CodingArgs a{
      int(rank),      decoder, colours, Y.data, Y.col_stride, Y.cols, layout.feature_tiles,
      layout.pairs(), alpha,   beta};
  const Index blocks = std::min<Index>((a.pairs / kPairs + kWarps - 1) / kWarps,
                                       resident_blocks<stl_decode_mma_kernel<D>>(kThreads));
  stl_decode_mma_kernel<D>
      <<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(a);
  check_launch("stl_decode_mma_kernel");
}

#define STROP_INSTANTIATE(S)                                                                     \
  template void stl_encode_mma<S>(Index, const float*, ConstView<S>, S*, const StlColourLayout&, \
                                  Context&);                                                     \
  template void stl_decode_mma<S>(Index, const float*, const S*, const StlColourLayout&,         \
                                  MatrixView<S>, float, float, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
