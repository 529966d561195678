// Tensor-core encode, decode and chain mixing of a Strassen-Tile layer for 16-bit signals
// (half, bfloat16) with t = 4 tiles. Each is a product with a small coefficient matrix:
//   encode  colours (r x pairs)  = E_X (r x 16)  tiles (16 x pairs)
//   decode  tiles (16 x pairs)   = D^T (16 x r)  colours (r x pairs)
//   mix     next (r' x pairs)    = M (r' x r)    colours (r x pairs)
// All three are bound by memory. The scalar kernels (stl_kernels.cu) spend r x 16 fp32
// multiply-adds per pair on CUDA cores; on the H100 that kept encode + decode at about 2/3 of
// the copy rate (0.41 ms against 0.27 ms of traffic at n = 8192, r = 32). Here the arithmetic
// is a few m16n8k16 products per 8 pairs and the kernels are left with their loads and stores.
//
// A warp takes 8 * kTilesPerWarp consecutive pairs (n-tiles of 8 pairs); lane 4 g + t holds
// pair g of each n-tile. The 16 values of a tile are ordered (the product's k index for the
// encode, its m index for the decode) so that each 32-bit fragment register holds two values
// that are neighbours in memory: features fastest where features are contiguous (ColMajor),
// signals fastest where signals are (RowMajor). So X and Y move in 4-byte words; the colours
// (one colour's pairs contiguous) are read 16 bits at a time, and written as words.
//
// The encoder and decoder are fp32. They enter the products as the sum of 2 (half) or 3
// (bfloat16) 16-bit parts, so each product carries 22-24 bits of every coefficient and the
// fp32 sums match the scalar kernels' before the one rounding to 16 bits. The mixing matrix of
// a chain is already 16-bit (as the cuBLAS mixing GEMM took it).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/stl/stl_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxRankTiles = int(kStlCodingMaxRank / 16);  // 16-row tiles of a rank

template <class D>
constexpr int kTerms = std::is_same_v<D, __half> ? 2 : 3;

// The lane's A fragment of the 16 x 16 tile at (row0, col0) of coef(row, col), as `Terms`
// 16-bit parts whose sum is the fp32 value (each part is the rounding of what the previous
// ones left).
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

// The encode's k index: tile value i + 4 f (signal i, feature f: the coefficients' order) at
// position kappa, so that positions 2j and 2j + 1 are neighbours in memory.
template <int Contiguity>
__device__ __forceinline__ int encode_value(int kappa) {
  const int i = Contiguity == kFeaturesContiguous ? kappa / 4 : kappa % 4;
  const int f = Contiguity == kFeaturesContiguous ? kappa % 4 : kappa / 4;
  return i + 4 * f;
}
// The decode's m index: rows rho and rho + 8 (one lane's pair of outputs) are neighbours.
template <int Contiguity>
__device__ __forceinline__ int decode_value(int rho) {
  const int near = 2 * ((rho % 8) / 4) + rho / 8, far = rho % 4;
  const int i = Contiguity == kFeaturesContiguous ? far : near;
  const int f = Contiguity == kFeaturesContiguous ? near : far;
  return i + 4 * f;
}

__device__ __forceinline__ Index pair_count(const StlColourLayout& layout) {
  return layout.signal_tiles * layout.feature_tiles;
}

// The tile pair e: signal tile I, feature tile F (StlColourLayout's order).
struct Pair {
  Index I, F;
};
__device__ __forceinline__ Pair pair_at(Index e, const StlColourLayout& layout) {
  if (layout.signal_fast) return {e % layout.signal_tiles, e / layout.signal_tiles};
  return {e / layout.feature_tiles, e % layout.feature_tiles};
}

// Two 16-bit values (lo at the lower address) as one fragment word.
__device__ __forceinline__ uint32_t word_of(uint16_t lo, uint16_t hi) {
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

// The B fragment of colours k0 ... k0 + 15 (rows of `colours`, one row per colour, `rows`
// of them) at pair e: b[h] holds colours k0 + 2 t + 8 h and the next one.
__device__ __forceinline__ void load_colours(const uint16_t* colours, Index pairs, int rows,
                                             Index e, int k0, int t, uint32_t (&b)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int k = k0 + 2 * t + 8 * h;
    const uint16_t lo = e < pairs && k < rows ? colours[Index(k) * pairs + e] : uint16_t(0);
    const uint16_t hi = e < pairs && k + 1 < rows ? colours[Index(k + 1) * pairs + e] : uint16_t(0);
    b[h] = word_of(lo, hi);
  }
}

// Colour p at pairs e and e + 1 (e even): one word where the row's pairs keep words aligned.
template <class D>
__device__ __forceinline__ void store_colours(D* colours, Index pairs, int rows, int p, Index e,
                                              float v0, float v1) {
  if (p >= rows || e >= pairs) return;
  const uint32_t word = pack(D{}, v0, v1);
  uint16_t* at = reinterpret_cast<uint16_t*>(colours) + Index(p) * pairs + e;
  if (pairs % 2 == 0) {
    *reinterpret_cast<uint32_t*>(at) = word;
  } else {
    at[0] = uint16_t(word & 0xffffu);
    if (e + 1 < pairs) at[1] = uint16_t(word >> 16);
  }
}

template <class D>
struct EncodeArgs {
  int rank;
  const float* encoder;  // r x 16 row-major
  const D* x;
  Index x_rs, x_cs, batch;
  StlColourLayout layout;
  D* colours;
};

// The B fragment of the input tile of pair e (zeros beyond the batch): b[h] holds positions
// 2 t + 8 h and 2 t + 8 h + 1, neighbours in memory.
template <int Contiguity, class D>
__device__ __forceinline__ void load_tile(const EncodeArgs<D>& a, Index e, int t,
                                          uint32_t (&b)[2]) {
  b[0] = b[1] = 0;
  if (e >= pair_count(a.layout)) return;
  const Pair pr = pair_at(e, a.layout);
  const uint16_t* x = reinterpret_cast<const uint16_t*>(a.x);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int value = encode_value<Contiguity>(2 * t + 8 * h);
    const Index s = 4 * pr.I + value % 4, f = 4 * pr.F + value / 4;
    if constexpr (Contiguity == kFeaturesContiguous) {
      if (s < a.batch) b[h] = *reinterpret_cast<const uint32_t*>(x + f + s * a.x_cs);
    } else {
      const uint16_t* at = x + f * a.x_rs + s;
      if (s + 1 < a.batch)
        b[h] = *reinterpret_cast<const uint32_t*>(at);
      else if (s < a.batch)
        b[h] = word_of(at[0], 0);
    }
  }
}

constexpr int kEncodeTilesPerWarp = 4;

template <class D, int Contiguity>
__global__ void __launch_bounds__(kThreads, 2) stl_encode_mma_kernel(const EncodeArgs<D> a) {
  constexpr int Terms = kTerms<D>, NT = kEncodeTilesPerWarp;
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int tiles = (a.rank + 15) / 16;
  auto coef = [&](int p, int kappa) {
    return p < a.rank ? a.encoder[p * 16 + encode_value<Contiguity>(kappa)] : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][Terms][4] = {};
#pragma unroll
  for (int m = 0; m < kMaxRankTiles; ++m)
    if (m < tiles) coefficient_fragment<D, Terms>(frag[m], coef, 16 * m, 0);
  const Index pairs = pair_count(a.layout);
  const Index warps = Index(gridDim.x) * (kThreads / 32);
  for (Index e0 = (Index(blockIdx.x) * kThreads + threadIdx.x) / 32 * (8 * NT); e0 < pairs;
       e0 += warps * (8 * NT)) {
    uint32_t b[NT][2];
#pragma unroll
    for (int u = 0; u < NT; ++u)
      load_tile<Contiguity>(a, e0 + 8 * u + g, t, b[u]);
#pragma unroll
    for (int m = 0; m < kMaxRankTiles; ++m) {
      if (m >= tiles) break;
#pragma unroll
      for (int u = 0; u < NT; ++u) {
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int term = 0; term < Terms; ++term)
          mma_add(D{}, d, frag[m][term], b[u][0], b[u][1], d);
        const Index e = e0 + 8 * u + 2 * t;
        store_colours(a.colours, pairs, a.rank, 16 * m + g, e, d[0], d[1]);
        store_colours(a.colours, pairs, a.rank, 16 * m + g + 8, e, d[2], d[3]);
      }
    }
  }
}

template <class D>
struct DecodeArgs {
  int rank;
  const float* decoder;  // r x 16 row-major
  const D* colours;
  StlColourLayout layout;
  D* y;
  Index y_rs, y_cs, batch;
  float alpha, beta;
};

// y = alpha v + beta y for two neighbouring values of Y (beta == 0 does not read Y).
template <class D>
__device__ __forceinline__ uint32_t updated(uint32_t old, float v0, float v1, float alpha,
                                            float beta) {
  v0 *= alpha;
  v1 *= alpha;
  if (beta != 0.0f) {
    const float2 y = unpack(D{}, old);
    v0 = fmaf(beta, y.x, v0);
    v1 = fmaf(beta, y.y, v1);
  }
  return pack(D{}, v0, v1);
}

// Rows g and g + 8 of pair e's output tile (lo, hi: neighbours in memory) into Y.
template <int Contiguity, class D>
__device__ __forceinline__ void store_tile(const DecodeArgs<D>& a, Index e, int g, float lo,
                                           float hi) {
  if (e >= pair_count(a.layout)) return;
  const Pair pr = pair_at(e, a.layout);
  const int value = decode_value<Contiguity>(g);
  const Index s = 4 * pr.I + value % 4, f = 4 * pr.F + value / 4;
  uint16_t* y = reinterpret_cast<uint16_t*>(a.y);
  const bool read = a.beta != 0.0f;
  if constexpr (Contiguity == kFeaturesContiguous) {
    if (s >= a.batch) return;
    auto* at = reinterpret_cast<uint32_t*>(y + f + s * a.y_cs);
    *at = updated<D>(read ? *at : 0u, lo, hi, a.alpha, a.beta);
  } else {
    uint16_t* at = y + f * a.y_rs + s;
    if (s + 1 < a.batch) {
      auto* word = reinterpret_cast<uint32_t*>(at);
      *word = updated<D>(read ? *word : 0u, lo, hi, a.alpha, a.beta);
    } else if (s < a.batch) {
      *at = uint16_t(updated<D>(read ? word_of(*at, 0) : 0u, lo, 0.0f, a.alpha, a.beta) & 0xffffu);
    }
  }
}

constexpr int kDecodeTilesPerWarp = 4;

template <class D, int Contiguity>
__global__ void __launch_bounds__(kThreads, 2) stl_decode_mma_kernel(const DecodeArgs<D> a) {
  constexpr int Terms = kTerms<D>, NT = kDecodeTilesPerWarp;
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int ktiles = (a.rank + 15) / 16;
  auto coef = [&](int rho, int p) {
    return p < a.rank ? a.decoder[p * 16 + decode_value<Contiguity>(rho)] : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][Terms][4] = {};
#pragma unroll
  for (int k = 0; k < kMaxRankTiles; ++k)
    if (k < ktiles) coefficient_fragment<D, Terms>(frag[k], coef, 0, 16 * k);
  const Index pairs = pair_count(a.layout);
  const auto* colours = reinterpret_cast<const uint16_t*>(a.colours);
  const Index warps = Index(gridDim.x) * (kThreads / 32);
  for (Index e0 = (Index(blockIdx.x) * kThreads + threadIdx.x) / 32 * (8 * NT); e0 < pairs;
       e0 += warps * (8 * NT)) {
    uint32_t b[NT][kMaxRankTiles][2] = {};
#pragma unroll
    for (int u = 0; u < NT; ++u)
#pragma unroll
      for (int k = 0; k < kMaxRankTiles; ++k)
        if (k < ktiles) load_colours(colours, pairs, a.rank, e0 + 8 * u + g, 16 * k, t, b[u][k]);
#pragma unroll
    for (int u = 0; u < NT; ++u) {
      float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int k = 0; k < kMaxRankTiles; ++k) {
        if (k >= ktiles) break;
#pragma unroll
        for (int term = 0; term < Terms; ++term)
          mma_add(D{}, d, frag[k][term], b[u][k][0], b[u][k][1], d);
      }
      const Index e = e0 + 8 * u + 2 * t;
      store_tile<Contiguity>(a, e, g, d[0], d[2]);
      store_tile<Contiguity>(a, e + 1, g, d[1], d[3]);
    }
  }
}

template <class D>
struct MixArgs {
  int rank, next_rank;
  const D* mix;  // next_rank x rank column-major, leading dimension mix_ld
  Index mix_ld;
  const D* colours;
  Index pairs;
  D* next;
};

constexpr int kMixTilesPerWarp = 2;

template <class D>
__global__ void __launch_bounds__(kThreads, 2) stl_mix_mma_kernel(const MixArgs<D> a) {
  constexpr int NT = kMixTilesPerWarp;
  const int lane = int(threadIdx.x % 32), g = lane / 4, t = lane % 4;
  const int mtiles = (a.next_rank + 15) / 16, ktiles = (a.rank + 15) / 16;
  auto coef = [&](int q, int p) {
    return q < a.next_rank && p < a.rank ? load_value(a.mix + q + p * a.mix_ld) : 0.0f;
  };
  uint32_t frag[kMaxRankTiles][kMaxRankTiles][1][4] = {};
#pragma unroll
  for (int m = 0; m < kMaxRankTiles; ++m)
#pragma unroll
    for (int k = 0; k < kMaxRankTiles; ++k)
      if (m < mtiles && k < ktiles) coefficient_fragment<D, 1>(frag[m][k], coef, 16 * m, 16 * k);
  const auto* colours = reinterpret_cast<const uint16_t*>(a.colours);
  const Index warps = Index(gridDim.x) * (kThreads / 32);
  for (Index e0 = (Index(blockIdx.x) * kThreads + threadIdx.x) / 32 * (8 * NT); e0 < a.pairs;
       e0 += warps * (8 * NT)) {
    uint32_t b[NT][kMaxRankTiles][2] = {};
#pragma unroll
    for (int u = 0; u < NT; ++u)
#pragma unroll
      for (int k = 0; k < kMaxRankTiles; ++k)
        if (k < ktiles) load_colours(colours, a.pairs, a.rank, e0 + 8 * u + g, 16 * k, t, b[u][k]);
#pragma unroll
    for (int m = 0; m < kMaxRankTiles; ++m) {
      if (m >= mtiles) break;
#pragma unroll
      for (int u = 0; u < NT; ++u) {
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < kMaxRankTiles; ++k) {
          if (k >= ktiles) break;
          mma_add(D{}, d, frag[m][k][0], b[u][k][0], b[u][k][1], d);
        }
        const Index e = e0 + 8 * u + 2 * t;
        store_colours(a.next, a.pairs, a.next_rank, 16 * m + g, e, d[0], d[1]);
        store_colours(a.next, a.pairs, a.next_rank, 16 * m + g + 8, e, d[2], d[3]);
      }
    }
  }
}

// Enough blocks for every warp's first chunk of pairs, at most 8 per multiprocessor (the
// warps then stride over the rest; each block builds its coefficient fragments once).
dim3 grid_for(Index pairs, int pairs_per_warp) {
  const Index chunks = (pairs + pairs_per_warp - 1) / pairs_per_warp;
  const Index blocks = (chunks + kThreads / 32 - 1) / (kThreads / 32);
  return dim3(unsigned(std::min<Index>(blocks, Index(8) * multiprocessors())));
}

}  // namespace

template <class Storage>
void stl_encode_mma(Index rank, const float* encoder, ConstView<Storage> X, Storage* colours,
                    const StlColourLayout& layout, int contiguity, Context& ctx) {
  using D = DeviceScalar<Storage>;
  const EncodeArgs<D> a{
      int(rank), encoder, reinterpret_cast<const D*>(X.data), X.row_stride, X.col_stride,
      X.cols,    layout,  reinterpret_cast<D*>(colours)};
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  const dim3 grid = grid_for(layout.pairs(), 8 * kEncodeTilesPerWarp);
  if (contiguity == kFeaturesContiguous)
    stl_encode_mma_kernel<D, kFeaturesContiguous><<<grid, kThreads, 0, stream>>>(a);
  else
    stl_encode_mma_kernel<D, kSignalsContiguous><<<grid, kThreads, 0, stream>>>(a);
  check_launch("stl_encode_mma_kernel");
}

template <class Storage>
void stl_decode_mma(Index rank, const float* decoder, const Storage* colours,
                    const StlColourLayout& layout, MatrixView<Storage> Y, float alpha, float beta,
                    int contiguity, Context& ctx) {
  using D = DeviceScalar<Storage>;
  const DecodeArgs<D> a{int(rank),
                        decoder,
                        reinterpret_cast<const D*>(colours),
                        layout,
                        reinterpret_cast<D*>(Y.data),
                        Y.row_stride,
                        Y.col_stride,
                        Y.cols,
                        alpha,
                        beta};
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  const dim3 grid = grid_for(layout.pairs(), 8 * kDecodeTilesPerWarp);
  if (contiguity == kFeaturesContiguous)
    stl_decode_mma_kernel<D, kFeaturesContiguous><<<grid, kThreads, 0, stream>>>(a);
  else
    stl_decode_mma_kernel<D, kSignalsContiguous><<<grid, kThreads, 0, stream>>>(a);
  check_launch("stl_decode_mma_kernel");
}

template <class Storage>
void stl_mix_mma(Index rank, const Storage* colours, Index pairs, const Storage* mix, Index mix_ld,
                 Index next_rank, Storage* next, Context& ctx) {
  using D = DeviceScalar<Storage>;
  const MixArgs<D> a{int(rank),
                     int(next_rank),
                     reinterpret_cast<const D*>(mix),
                     mix_ld,
                     reinterpret_cast<const D*>(colours),
                     pairs,
                     reinterpret_cast<D*>(next)};
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  stl_mix_mma_kernel<D><<<grid_for(pairs, 8 * kMixTilesPerWarp), kThreads, 0, stream>>>(a);
  check_launch("stl_mix_mma_kernel");
}

#define STROP_INSTANTIATE(S)                                                                     \
  template void stl_encode_mma<S>(Index, const float*, ConstView<S>, S*, const StlColourLayout&, \
                                  int, Context&);                                                \
  template void stl_decode_mma<S>(Index, const float*, const S*, const StlColourLayout&,         \
                                  MatrixView<S>, float, float, int, Context&);                   \
  template void stl_mix_mma<S>(Index, const S*, Index, const S*, Index, Index, S*, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
