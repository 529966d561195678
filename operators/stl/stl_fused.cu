// The colour GEMMs and the decode of a Strassen-Tile layer in one kernel, for a few signals
// (StlPath::Fused; eligibility in stl_steps.hpp). With B <= 16 the layer is bound by reading
// its encoded weights once (r (N/t)(M/t) values, each used by at most 4 signal tiles), and the
// three-step path adds what this kernel removes: a cuBLAS call shaped for large GEMMs, the
// colours written to and read back from global memory, and a third launch.
//
// A block owns kBlockTiles (4) output tiles J and every colour p of them. Warp w takes
// colours w, w + 8, ...; for one colour, lane l streams runs of 8 input tiles L of each weight
// column (16-byte loads) through the warp's chunks of 256, several chunks' loads in flight at
// once, with the encoded signals X̂^(p)(L, I) of the run in registers, reused by the block's
// output tiles. The lanes' partial sums are then added with shuffles and the colours
// Ŷ^(p)(J, I) parked in shared memory. After a barrier every thread decodes the 4 outputs of
// one (output tile, signal tile, feature) and writes them with alpha and beta. X̂ (r x in_tiles
// x S, at most a few MB, read from L2) comes from the encode kernel, run before in signal-fast
// order so that a run's values are contiguous.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/stl/stl_fused_limits.hpp"
#include "operators/stl/stl_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/error.hpp"
#include "strop/core/scalar.hpp"

namespace strop::detail {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kBlockTiles = 4;                // output tiles per block
constexpr int kRun = int(kStlFusedRunTiles);  // input tiles per lane and chunk

// kRun values of D travel as 16-byte words (uint4), kept packed in registers until used.
template <class D>
constexpr int kPerWord = 16 / int(sizeof(D));
template <class D>
constexpr int kWordsPerRun = kRun / kPerWord<D>;

__device__ __forceinline__ unsigned component(const uint4& w, int c) {
  return c == 0 ? w.x : c == 1 ? w.y : c == 2 ? w.z : w.w;
}
// Element e of a word of D values, as Acc (e is a constant once the loops are unrolled).
template <class D, class Acc>
__device__ __forceinline__ Acc element(const uint4& w, int e) {
  if constexpr (sizeof(D) == 2) {
    const unsigned short bits = static_cast<unsigned short>(component(w, e / 2) >> (16 * (e % 2)));
    if constexpr (std::is_same_v<D, __half>)
      return __half2float(__ushort_as_half(bits));
    else
      return __bfloat162float(__ushort_as_bfloat16(bits));
  } else if constexpr (sizeof(D) == 4) {
    return __uint_as_float(component(w, e));
  } else {
    return __hiloint2double(int(component(w, 2 * e + 1)), int(component(w, 2 * e)));
  }
}

// Chunks whose loads are in flight together: about 64 registers of raw weights, and at most
// 32 values of encoded signals.
__host__ __device__ constexpr int chunks_in_flight(int element_bytes, int sp) {
  const int by_weights = 64 / (8 * element_bytes), by_signals = 32 / (8 * sp);
  const int chunks = by_weights < by_signals ? by_weights : by_signals;
  return chunks > 0 ? chunks : 1;
}

// What the kernel does with a block's colours: decode them into Y (the last layer), or mix
// them into the next layer's encoded signals (inside a chain, the fused decode-encode).
template <class D, class Acc, class Coef>
struct StlEpilogue {
  // Decode (mix == nullptr): Y = alpha decode + beta Y, decoder r x 16 row-major.
  const Coef* decoder = nullptr;
  D* y = nullptr;
  Index y_rs = 0, y_cs = 0, batch = 0;
  Acc alpha = 0, beta = 0;
  // Mix: next(q, J, I) = sum_p M(q, p) Ŷ^(p)(J, I) (M r_next x r column-major, leading
  // dimension mix_ld), next r_next x out_tiles x S with S fastest.
  const D* mix = nullptr;
  int mix_ld = 0, next_rank = 0;
  D* next = nullptr;
};

// SP: the signal tiles rounded up to 1, 2 or 4 (registers per output tile).
template <class D, class Acc, class Coef, int SP, bool MIX>
__global__ void __launch_bounds__(kThreads, 2)
    stl_fused_kernel(int rank, int in_tiles, int out_tiles, int signal_tiles,
                     const D* __restrict__ xhat, const D* __restrict__ weight,
                     StlEpilogue<D, Acc, Coef> epi) {
  extern __shared__ unsigned char shared_bytes[];
  Acc* colours = reinterpret_cast<Acc*>(shared_bytes);  // [rank][kBlockTiles][SP]
  // The epilogue's coefficients: the decoder [rank][16], or the mixing as [rank][r_next].
  Coef* dec = reinterpret_cast<Coef*>(colours + rank * kBlockTiles * SP);
  Acc* mix = reinterpret_cast<Acc*>(colours + rank * kBlockTiles * SP);
  if constexpr (MIX) {
    for (int i = threadIdx.x; i < rank * epi.next_rank; i += kThreads)
      mix[i] = Acc(load_value(epi.mix + (i / epi.next_rank) * epi.mix_ld + i % epi.next_rank));
  } else {
    for (int i = threadIdx.x; i < rank * 16; i += kThreads)
      dec[i] = epi.decoder[i];
  }
  constexpr int kChunks = chunks_in_flight(int(sizeof(D)), SP);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first_tile = blockIdx.x * kBlockTiles;
  const int tiles_here = min(kBlockTiles, out_tiles - first_tile);
  for (int p = warp; p < rank; p += kWarps) {
    // Ŵ^(p) is in_tiles x out_tiles column-major; X̂^(p) in_tiles x S with S fastest.
    const D* w = weight + Index(p) * in_tiles * out_tiles + Index(first_tile) * in_tiles;
    const D* x = xhat + Index(p) * in_tiles * signal_tiles;
    Acc acc[kBlockTiles][SP] = {};
    for (int base = lane * kRun; base < in_tiles; base += 32 * kRun * kChunks) {
      // Every load of kChunks chunks is issued before the first multiply-add: one chunk's
      // loads alone left the kernel latency-bound (a third of the copy rate at n = 4096).
      uint4 wraw[kChunks][kBlockTiles][kWordsPerRun<D>];
      Acc xv[kChunks][kRun * SP];  // X̂(L0 + l, i) at l * SP + i
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int L0 = base + c * 32 * kRun;
        const bool inside = L0 < in_tiles;
#pragma unroll
        for (int j = 0; j < kBlockTiles; ++j)
#pragma unroll
          for (int k = 0; k < kWordsPerRun<D>; ++k)
            wraw[c][j][k] = inside && j < tiles_here
                                ? reinterpret_cast<const uint4*>(w + Index(j) * in_tiles + L0)[k]
                                : make_uint4(0, 0, 0, 0);
        if (!inside) {
#pragma unroll
          for (int f = 0; f < kRun * SP; ++f)
            xv[c][f] = Acc(0);
        } else if (signal_tiles == SP) {
#pragma unroll
          for (int r8 = 0; r8 < SP; ++r8)
#pragma unroll
            for (int k = 0; k < kWordsPerRun<D>; ++k) {
              const uint4 word = reinterpret_cast<const uint4*>(x + Index(L0) * SP + r8 * kRun)[k];
#pragma unroll
              for (int e = 0; e < kPerWord<D>; ++e)
                xv[c][r8 * kRun + k * kPerWord<D> + e] = element<D, Acc>(word, e);
            }
        } else {
#pragma unroll
          for (int l = 0; l < kRun; ++l)
#pragma unroll
            for (int i = 0; i < SP; ++i)
              xv[c][l * SP + i] =
                  i < signal_tiles ? Acc(load_value(x + Index(L0 + l) * signal_tiles + i)) : Acc(0);
        }
      }
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int j = 0; j < kBlockTiles; ++j)
#pragma unroll
          for (int k = 0; k < kWordsPerRun<D>; ++k)
#pragma unroll
            for (int e = 0; e < kPerWord<D>; ++e) {
              const int l = k * kPerWord<D> + e;
              const Acc wv = element<D, Acc>(wraw[c][j][k], e);
#pragma unroll
              for (int i = 0; i < SP; ++i)
                acc[j][i] = fma(wv, xv[c][l * SP + i], acc[j][i]);
            }
    }
#pragma unroll
    for (int j = 0; j < kBlockTiles; ++j)
#pragma unroll
      for (int i = 0; i < SP; ++i) {
        Acc v = acc[j][i];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
          v += __shfl_xor_sync(0xffffffffu, v, offset);
        if ((j * SP + i) % 32 == lane) colours[(p * kBlockTiles + j) * SP + i] = v;
      }
  }
  __syncthreads();
  if constexpr (MIX) {
    // Colour q of (output tile j, signal tile i): consecutive items, consecutive addresses.
    for (int item = threadIdx.x; item < epi.next_rank * kBlockTiles * SP; item += kThreads) {
      const int i = item % SP, j = item / SP % kBlockTiles, q = item / (SP * kBlockTiles);
      if (j >= tiles_here || i >= signal_tiles) continue;
      Acc value = 0;
      for (int p = 0; p < rank; ++p)
        value = fma(mix[p * epi.next_rank + q], colours[(p * kBlockTiles + j) * SP + i], value);
      store_value(epi.next + (Index(q) * out_tiles + first_tile + j) * signal_tiles + i, value);
    }
  } else {
    // Output tile j, signal tile i, feature g of the tile: its signals s = 0..3 are the decoded
    // entries s + 4 g.
    for (int item = threadIdx.x; item < kBlockTiles * SP * 4; item += kThreads) {
      const int g = item % 4, i = item / 4 % SP, j = item / (4 * SP);
      if (j >= tiles_here || i >= signal_tiles) continue;
      Acc out[4] = {};
      for (int p = 0; p < rank; ++p) {
        const Acc c = colours[(p * kBlockTiles + j) * SP + i];
#pragma unroll
        for (int s = 0; s < 4; ++s)
          out[s] = fma(Acc(dec[p * 16 + s + 4 * g]), c, out[s]);
      }
      const Index feature = Index(first_tile + j) * 4 + g;
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const Index signal = Index(i) * 4 + s;
        if (signal >= epi.batch) break;
        D* target = epi.y + feature * epi.y_rs + signal * epi.y_cs;
        // beta == 0 overwrites, so NaNs in Y do not propagate.
        Acc value = epi.alpha * out[s];
        if (epi.beta != Acc(0)) value += epi.beta * Acc(load_value(target));
        store_value(target, value);
      }
    }
  }
}

// One launch of the kernel for a layer's colours, with the given epilogue.
template <class Storage, bool MIX>
void launch_fused(
    Index rank, Index in_tiles, Index out_tiles, Index signal_tiles, const Storage* encoded,
    const Storage* weight,
    const StlEpilogue<DeviceScalar<Storage>, StlCompute<Storage>, StlCoef<Storage>>& epi,
    Context& ctx) {
  static_assert(!is_complex_v<Storage>, "the fused STL kernel takes real values");
  using D = DeviceScalar<Storage>;
  using Acc = StlCompute<Storage>;
  using Coef = StlCoef<Storage>;
  require<DeviceError>(rank <= kStlFusedMaxRank && epi.next_rank <= kStlFusedMaxRank &&
                           signal_tiles <= kStlFusedMaxSignalTiles && in_tiles % kRun == 0,
                       "stl fused kernel: rank ", rank, " (next ", epi.next_rank, "), ",
                       signal_tiles, " signal tiles and ", in_tiles,
                       " input tiles are outside the kernel");
  for (const void* p : {static_cast<const void*>(encoded), static_cast<const void*>(weight)})
    require<DeviceError>(reinterpret_cast<std::uintptr_t>(p) % 16 == 0,
                         "stl fused kernel: operands must be 16-byte aligned");
  if (out_tiles == 0 || signal_tiles == 0) return;
  const int sp = signal_tiles <= 1 ? 1 : signal_tiles <= 2 ? 2 : 4;
  const std::size_t coefficients =
      MIX ? sizeof(Acc) * std::size_t(rank * epi.next_rank) : sizeof(Coef) * std::size_t(rank * 16);
  const std::size_t shared = sizeof(Acc) * std::size_t(rank * kBlockTiles * sp) + coefficients;
  const dim3 grid(static_cast<unsigned>((out_tiles + kBlockTiles - 1) / kBlockTiles));
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto launch = [&](auto kernel) {
    kernel<<<grid, kThreads, shared, stream>>>(
        int(rank), int(in_tiles), int(out_tiles), int(signal_tiles),
        reinterpret_cast<const D*>(encoded), reinterpret_cast<const D*>(weight), epi);
  };
  switch (sp) {
    case 1:
      launch(stl_fused_kernel<D, Acc, Coef, 1, MIX>);
      break;
    case 2:
      launch(stl_fused_kernel<D, Acc, Coef, 2, MIX>);
      break;
    default:
      launch(stl_fused_kernel<D, Acc, Coef, 4, MIX>);
      break;
  }
  check_launch("stl_fused_kernel");
}

}  // namespace

template <class Storage>
void stl_colours_decode(Index rank, Index in_tiles, Index out_tiles, Index signal_tiles,
                        const Storage* encoded, const Storage* weight,
                        const StlCoef<Storage>* decoder, MatrixView<Storage> Y,
                        StlCompute<Storage> alpha, StlCompute<Storage> beta, Context& ctx) {
  using D = DeviceScalar<Storage>;
  StlEpilogue<D, StlCompute<Storage>, StlCoef<Storage>> epi;
  epi.decoder = decoder;
  epi.y = reinterpret_cast<D*>(Y.data);
  epi.y_rs = Y.row_stride;
  epi.y_cs = Y.col_stride;
  epi.batch = Y.cols;
  epi.alpha = alpha;
  epi.beta = beta;
  launch_fused<Storage, false>(rank, in_tiles, out_tiles, signal_tiles, encoded, weight, epi, ctx);
}

template <class Storage>
void stl_colours_mix(Index rank, Index in_tiles, Index out_tiles, Index signal_tiles,
                     const Storage* encoded, const Storage* weight, const Storage* mix,
                     Index mix_ld, Index next_rank, Storage* next, Context& ctx) {
  using D = DeviceScalar<Storage>;
  StlEpilogue<D, StlCompute<Storage>, StlCoef<Storage>> epi;
  epi.mix = reinterpret_cast<const D*>(mix);
  epi.mix_ld = int(mix_ld);
  epi.next_rank = int(next_rank);
  epi.next = reinterpret_cast<D*>(next);
  launch_fused<Storage, true>(rank, in_tiles, out_tiles, signal_tiles, encoded, weight, epi, ctx);
}

#define STROP_INSTANTIATE(S)                                                                 \
  template void stl_colours_decode<S>(Index, Index, Index, Index, const S*, const S*,        \
                                      const StlCoef<S>*, MatrixView<S>, StlCompute<S>,       \
                                      StlCompute<S>, Context&);                              \
  template void stl_colours_mix<S>(Index, Index, Index, Index, const S*, const S*, const S*, \
                                   Index, Index, S*, Context&);
STROP_INSTANTIATE(float)
STROP_INSTANTIATE(double)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
