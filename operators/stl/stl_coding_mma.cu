// Tensor-core encode and decode of a Strassen-Tile layer for 16-bit signals (half, bfloat16)
// with t = 4, for the steps path's large batches: the batch contiguous along its features
// (ColMajor, the colours with the feature tiles fastest) or along its signals (RowMajor, the
// signal tiles fastest), 32 | the tiles of the fast order. Both are products with a small
// coefficient matrix,
//   encode  colours (r x pairs) = E_X (r x 16)  tiles (16 x pairs),
//   decode  tiles (16 x pairs)  = D^T (16 x r)  colours (r x pairs),
// and bound by memory; the scalar kernels (stl_kernels.cu) spend r x 16 fp32 multiply-adds per
// pair, which kept the encode at 81 % of the SM's issue rate and 65 % of the copy rate on the
// H100 (ncu, n = 8192, r = 32). Here a warp takes 32 consecutive pairs: 4 rows (signals, or
// features) of 128 contiguous values of X or Y, and a 64-byte run of each colour. It stages them
// through its own shared memory with 16-byte coalesced loads and stores and multiplies with
// m16n8k16 products. (A first version fed the fragments straight from global memory: 2-byte
// gathers and 16-byte partial-sector stores made it 1.5x slower than the scalar kernels.)
//
// In a warp's tile, row r and position 4 n + c hold the value of pair n at (row r, column c)
// of its 4 x 4 tile, rows along the slow dimension. The 16 values are ordered so that a 32-bit
// fragment register holds neighbours in a row: k = c + 4 r for the encode; for the decode's m,
// rows rho and rho + 8 are columns c, c + 1 of one row. The fp32 coefficients enter as the sum
// of 2 (half) or 3 (bfloat16) 16-bit parts, so each product carries 22-24 bits of every
// coefficient and the fp32 sums match the scalar kernels' before the one rounding to 16 bits.
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
constexpr int kTilePitch = 160;                      // halves per row of X's tile (128 + padding)
constexpr int kOutputPitch = 132;                    // floats per row of Y's tile (128 + padding)
constexpr int kColourPitch = 40;                     // halves per staged colour row (32 + padding)
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

// The coefficients' index i + 4 f (signal i, feature f) of a value at row r, column c of a warp
// tile: rows are signals where features are contiguous, features where signals are.
template <int Contiguity>
__device__ __forceinline__ int tile_value(int r, int c) {
  return Contiguity == kFeaturesContiguous ? r + 4 * c : c + 4 * r;
}
// ... at the encode's k position kappa = c + 4 r, and at the decode's m position rho (row
// rho % 4, column 2 ((rho % 8) / 4) + rho / 8: rho and rho + 8 are neighbours in a row).
template <int Contiguity>
__device__ __forceinline__ int encode_value(int kappa) {
  return tile_value<Contiguity>(kappa / 4, kappa % 4);
}
template <int Contiguity>
__device__ __forceinline__ int decode_value(int rho) {
  return tile_value<Contiguity>(rho % 4, 2 * ((rho % 8) / 4) + rho / 8);
}

struct CodingArgs {
  int rank;
  const float* coefficients;  // r x 16 row-major (the encoder or the decoder)
  const void* in;
  void* out;
  Index stride;      // X's or Y's stride between rows of a warp tile (elements)
  Index batch;       // signals
  Index fast_tiles;  // tiles along the contiguous dimension (a multiple of kPairs)
  Index pairs;
  float alpha, beta;  // decode only
};

// Where task e0's 32 pairs live: 4 rows from `row0` (signals or features) of 128 contiguous
// values from `column0`; `valid(r, c)` counts the values of row r from column c that are signals
// of the batch (8: all of a 16-byte chunk).
template <int Contiguity>
struct WarpTile {
  Index row0, column0, batch;
  __device__ WarpTile(const CodingArgs& a, Index e0)
      : row0(4 * (e0 / a.fast_tiles)), column0(4 * (e0 % a.fast_tiles)), batch(a.batch) {}
  __device__ Index offset(int r, int c, Index stride) const {
    return (row0 + r) * stride + column0 + c;
  }
  __device__ int valid(int r, int c) const {
    const Index first = Contiguity == kFeaturesContiguous ? row0 + r : column0 + c;
    const Index count = Contiguity == kFeaturesContiguous ? (first < batch ? 8 : 0) : batch - first;
    return int(count < 0 ? 0 : count > 8 ? 8 : count);
  }
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

template <class D, int Contiguity>
__global__ void __launch_bounds__(kThreads) stl_encode_mma_kernel(const CodingArgs a) {
  constexpr int Terms = kTerms<D>;
  __shared__ __align__(16) unsigned char stage[kWarps][kWarpBytes];
  auto* tile = reinterpret_cast<uint16_t*>(warp_stage(stage));
  uint16_t* staged = staged_colours(warp_stage(stage));
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int tiles = (a.rank + 15) / 16;
  auto coef = [&](int p, int kappa) {
    return p < a.rank ? a.coefficients[p * 16 + encode_value<Contiguity>(kappa)] : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][Terms][4] = {};
#pragma unroll
  for (int m = 0; m < kMaxRankTiles; ++m)
    if (m < tiles) coefficient_fragment<D, Terms>(frag[m], coef, 16 * m, 0);
  const auto* x = static_cast<const uint16_t*>(a.in);
  auto* colours = static_cast<uint16_t*>(a.out);
  const Index tasks = a.pairs / kPairs, warps = Index(gridDim.x) * kWarps;
  for (Index task = blockIdx.x * Index(kWarps) + threadIdx.x / 32; task < tasks; task += warps) {
    const Index e0 = task * kPairs;
    const WarpTile<Contiguity> w(a, e0);
    // The tile, 16 bytes per lane and chunk (zeros beyond the batch).
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int chunk = lane + 32 * j, r = chunk / 16, c = 8 * (chunk % 16);
      const int valid = w.valid(r, c);
      const uint16_t* from = x + w.offset(r, c, a.stride);
      uint4 v = {0, 0, 0, 0};
      if (valid == 8) {
        v = *reinterpret_cast<const uint4*>(from);
      } else {
        uint16_t part[8] = {};
        for (int k = 0; k < valid; ++k)
          part[k] = from[k];
        v = *reinterpret_cast<const uint4*>(part);
      }
      *reinterpret_cast<uint4*>(tile + r * kTilePitch + c) = v;
    }
    __syncwarp();
    // B fragments: kappa = 2 t, 2 t + 1 (row t / 2, columns 2 (t % 2) and the next) and
    // kappa + 8 (row t / 2 + 2) of pair 8 u + g.
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

template <class D, int Contiguity>
__global__ void __launch_bounds__(kThreads) stl_decode_mma_kernel(const CodingArgs a) {
  constexpr int Terms = kTerms<D>;
  __shared__ __align__(16) unsigned char stage[kWarps][kWarpBytes];
  auto* tile = reinterpret_cast<float*>(warp_stage(stage));
  uint16_t* staged = staged_colours(warp_stage(stage));
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int ktiles = (a.rank + 15) / 16;
  auto coef = [&](int rho, int p) {
    return p < a.rank ? a.coefficients[p * 16 + decode_value<Contiguity>(rho)] : 0.0f;
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
    const Index e0 = task * kPairs;
    const WarpTile<Contiguity> w(a, e0);
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
        // m rows g, g + 8: columns c, c + 1 of tile row g % 4 (c = 2 (g / 4)), pairs n, n + 1.
        const int n = 8 * (u + v) + 2 * t, r = g % 4, c = 2 * (g / 4);
        *reinterpret_cast<float2*>(tile + r * kOutputPitch + 4 * n + c) = float2{d[0], d[2]};
        *reinterpret_cast<float2*>(tile + r * kOutputPitch + 4 * (n + 1) + c) = float2{d[1], d[3]};
      }
    }
    __syncwarp();
    // Y = alpha tile + beta Y for the values of the batch, 16 bytes per lane and chunk.
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int chunk = lane + 32 * j, r = chunk / 16, c = 8 * (chunk % 16);
      const int valid = w.valid(r, c);
      if (valid == 0) continue;
      const float4 lo = *reinterpret_cast<const float4*>(tile + r * kOutputPitch + c);
      const float4 hi = *reinterpret_cast<const float4*>(tile + r * kOutputPitch + c + 4);
      uint16_t* to = y + w.offset(r, c, a.stride);
      uint4 old = {0, 0, 0, 0};
      if (read_y && valid == 8) {
        old = *reinterpret_cast<const uint4*>(to);
      } else if (read_y) {
        uint16_t part[8] = {};
        for (int k = 0; k < valid; ++k)
          part[k] = to[k];
        old = *reinterpret_cast<const uint4*>(part);
      }
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
      const uint4 out = {result[0], result[1], result[2], result[3]};
      if (valid == 8) {
        *reinterpret_cast<uint4*>(to) = out;
      } else {
        const auto* part = reinterpret_cast<const uint16_t*>(&out);
        for (int k = 0; k < valid; ++k)
          to[k] = part[k];
      }
    }
    __syncwarp();  // the stage is refilled by the next task
  }
}

// Runs the kernel for `contiguity` over the pairs: enough blocks for every warp's task, at most
// as many as the device holds at once (the warps then stride over the tasks).
template <auto FeaturesKernel, auto SignalsKernel>
void launch_coding(const CodingArgs& a, int contiguity, Context& ctx) {
  const bool features = contiguity == kFeaturesContiguous;
  const long long resident = features ? resident_blocks<FeaturesKernel>(kThreads)
                                      : resident_blocks<SignalsKernel>(kThreads);
  const Index blocks = std::min<Index>((a.pairs / kPairs + kWarps - 1) / kWarps, resident);
  const auto kernel = features ? FeaturesKernel : SignalsKernel;
  kernel<<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(a);
}

// The tile stride, signals and fast tiles of a batch view with the given contiguity.
template <class V>
CodingArgs coding_args(Index rank, const float* coefficients, const void* in, void* out,
                       const V& view, const StlColourLayout& layout, float alpha, float beta) {
  const bool features = view.row_stride == 1;
  return {int(rank),
          coefficients,
          in,
          out,
          features ? view.col_stride : view.row_stride,
          view.cols,
          features ? layout.feature_tiles : layout.signal_tiles,
          layout.pairs(),
          alpha,
          beta};
}

}  // namespace

template <class Storage>
void stl_encode_mma(Index rank, const float* encoder, ConstView<Storage> X, Storage* colours,
                    const StlColourLayout& layout, Context& ctx) {
  using D = DeviceScalar<Storage>;
  const CodingArgs a = coding_args(rank, encoder, X.data, colours, X, layout, 1.0f, 0.0f);
  launch_coding<stl_encode_mma_kernel<D, kFeaturesContiguous>,
                stl_encode_mma_kernel<D, kSignalsContiguous>>(
      a, X.row_stride == 1 ? kFeaturesContiguous : kSignalsContiguous, ctx);
  check_launch("stl_encode_mma_kernel");
}

template <class Storage>
void stl_decode_mma(Index rank, const float* decoder, const Storage* colours,
                    const StlColourLayout& layout, MatrixView<Storage> Y, float alpha, float beta,
                    Context& ctx) {
  using D = DeviceScalar<Storage>;
  const CodingArgs a = coding_args(rank, decoder, colours, Y.data, Y, layout, alpha, beta);
  launch_coding<stl_decode_mma_kernel<D, kFeaturesContiguous>,
                stl_decode_mma_kernel<D, kSignalsContiguous>>(
      a, Y.row_stride == 1 ? kFeaturesContiguous : kSignalsContiguous, ctx);
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
