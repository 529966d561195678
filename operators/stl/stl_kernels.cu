// Encode and decode kernels of the Strassen-Tile operator: one thread per (signal tile,
// feature tile) pair holds the pair's t^2 values in registers and the shared r x t^2
// coefficients in shared memory. Consecutive threads take consecutive pairs in the memory
// order of the batch (StlColourLayout), so both the batch and the colours are accessed
// with coalesced loads and stores.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/stl/stl_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

// acc += c v for a real coefficient c.
template <class R>
__device__ __forceinline__ void add_scaled(R& acc, R c, R v) {
  acc = fma(c, v, acc);
}
template <class R>
__device__ __forceinline__ void add_scaled(DeviceComplex<R>& acc, R c, DeviceComplex<R> v) {
  acc.re = fma(c, v.re, acc.re);
  acc.im = fma(c, v.im, acc.im);
}

// The pair handled by element e of a colour layout.
struct TilePair {
  Index signal_tile, feature_tile;
};
__device__ __forceinline__ TilePair pair_of(Index e, Index signal_tiles, Index feature_tiles,
                                            bool signal_fast) {
  if (signal_fast) return {e % signal_tiles, e / signal_tiles};
  return {e / feature_tiles, e % feature_tiles};
}

// Where a kernel reads its r x t^2 coefficients from. Shared memory (copied by each block
// from global memory) takes any count, but its loads bound both kernels: four 16-byte
// broadcast loads per 16 multiply-adds, one shared-memory wavefront per quarter warp, so the
// encode and decode ran at 0.51 ms against 0.27 ms of memory traffic at n = 8192, r = 32 on
// the H100. As a kernel parameter (up to kStlParamCoefficients values), with the colour loop
// unrolled, every coefficient is a constant-bank operand of its multiply-add.
template <class Coef>
struct SharedCoefficients {
  static constexpr bool kParam = false;
  const Coef* global;
};
template <class Coef>
struct ParamCoefficients {
  static constexpr bool kParam = true;
  Coef v[kStlParamCoefficients];
};

// The block's coefficients: source.v itself, or a copy in shared memory.
template <class Coef>
__device__ __forceinline__ const Coef* block_coefficients(const SharedCoefficients<Coef>& source,
                                                          void* shared, int count) {
  Coef* copy = static_cast<Coef*>(shared);
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    copy[i] = source.global[i];
  __syncthreads();
  return copy;
}
template <class Coef>
__device__ __forceinline__ const Coef* block_coefficients(const ParamCoefficients<Coef>& source,
                                                          void*, int) {
  return source.v;
}

// The colour loop's trip count: rank, or its largest value where the coefficients are
// parameters, so that the loop unrolls and their offsets are constants (the loop stops at rank).
template <int TILE, class Source>
constexpr int kColourLoopBound = Source::kParam ? int(kStlParamCoefficients) / (TILE * TILE)
                                                : 1 << 30;

// Four consecutive values of a batch, read or written by one vector access (t = 4 tiles
// along the contiguous dimension of an aligned batch: StlContiguity, stl_kernels.hpp).
template <class D>
struct alignas(4 * sizeof(D)) Quad {
  D v[4];
};

// The t^2 values of input tile pair e (entry i + t f; signals beyond the batch are zero).
template <int TILE, class D, class Acc>
__device__ __forceinline__ void load_input_tile(Index e, int t, const D* x, Index x_rs, Index x_cs,
                                                Index batch, Index signal_tiles,
                                                Index feature_tiles, bool signal_fast,
                                                int contiguity, Acc* v) {
  const TilePair tp = pair_of(e, signal_tiles, feature_tiles, signal_fast);
  const Index first_signal = tp.signal_tile * t;
  const D* base = x + tp.feature_tile * t * x_rs + first_signal * x_cs;
  if (TILE == 4 && contiguity == kFeaturesContiguous) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      Quad<D> q{};
      if (first_signal + i < batch) q = *reinterpret_cast<const Quad<D>*>(base + i * x_cs);
#pragma unroll
      for (int f = 0; f < 4; ++f)
        v[i + 4 * f] = Acc(load_value(&q.v[f]));
    }
  } else if (TILE == 4 && contiguity == kSignalsContiguous && first_signal + 3 < batch) {
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      const Quad<D> q = *reinterpret_cast<const Quad<D>*>(base + f * x_rs);
#pragma unroll
      for (int i = 0; i < 4; ++i)
        v[i + 4 * f] = Acc(load_value(&q.v[i]));
    }
  } else {
#pragma unroll
    for (int f = 0; f < (TILE > 0 ? TILE : kStlMaxDeviceTile); ++f) {
      if (f >= t) break;
#pragma unroll
      for (int i = 0; i < (TILE > 0 ? TILE : kStlMaxDeviceTile); ++i) {
        if (i >= t) break;
        v[i + t * f] =
            first_signal + i < batch ? Acc(load_value(base + f * x_rs + i * x_cs)) : Acc{};
      }
    }
  }
}

// TILE > 0: the tile size known at compile time (registers); TILE == 0: any t <= 8.
// Source: SharedCoefficients or (TILE > 0) ParamCoefficients. A thread's pairs are a grid
// stride apart, and the next pair's values are loaded before this pair's colours are computed.
// (That prefetch was meant to overlap loads with the arithmetic; on the H100 it measured no
// faster, as the kernel is bound by its r x t^2 multiply-adds' issue slots, ncu in session 21.
// It costs nothing and keeps the grid to the resident blocks.)
template <int TILE, class D, class Acc, class Source>
__global__ void stl_encode_kernel(int t_runtime, int rank, const Source encoder, const D* x,
                                  Index x_rs, Index x_cs, Index batch, Index signal_tiles,
                                  Index feature_tiles, bool signal_fast, int contiguity,
                                  D* colours) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int t = TILE > 0 ? TILE : t_runtime;
  const int t2 = t * t;
  const auto* coef = block_coefficients(encoder, shared_bytes, rank * t2);
  constexpr int kValues = TILE > 0 ? TILE * TILE : kStlMaxDeviceTile * kStlMaxDeviceTile;
  const Index pairs = signal_tiles * feature_tiles, stride = Index(gridDim.x) * blockDim.x;
  auto load = [&](Index e, Acc* v) {
    load_input_tile<TILE, D, Acc>(e, t, x, x_rs, x_cs, batch, signal_tiles, feature_tiles,
                                  signal_fast, contiguity, v);
  };
  Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Acc next[kValues];
  if (e < pairs) load(e, next);
  for (; e < pairs; e += stride) {
    Acc v[kValues];
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      v[k] = next[k];
    if (e + stride < pairs) load(e + stride, next);
#pragma unroll
    for (int p = 0; p < kColourLoopBound<TILE, Source>; ++p) {
      if (p >= rank) break;
      Acc acc{};
#pragma unroll
      for (int k = 0; k < kValues; ++k) {
        if (k >= t2) break;
        add_scaled(acc, coef[p * t2 + k], v[k]);
      }
      store_value(colours + p * pairs + e, acc);
    }
  }
}

template <int TILE, class D, class Acc, class Source>
__global__ void stl_decode_kernel(int t_runtime, int rank, const Source decoder, const D* colours,
                                  Index signal_tiles, Index feature_tiles, bool signal_fast,
                                  int contiguity, D* y, Index y_rs, Index y_cs, Index batch,
                                  Acc alpha, Acc beta) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int t = TILE > 0 ? TILE : t_runtime;
  const int t2 = t * t;
  const auto* coef = block_coefficients(decoder, shared_bytes, rank * t2);
  constexpr int kValues = TILE > 0 ? TILE * TILE : kStlMaxDeviceTile * kStlMaxDeviceTile;
  const Index pairs = signal_tiles * feature_tiles, stride = Index(gridDim.x) * blockDim.x;
  // The colours are read kColoursInFlight at a time: one 2-8 byte load per colour and
  // thread, so the loop is bound by load latency unless several are in flight (measured on
  // the H100: 0.28 ms for the decode at n = 8192, r = 32 with one or two in flight). The next
  // group (of this pair, or the first of the thread's next pair) is loaded before this one is
  // used, as in the encode.
  constexpr int kColoursInFlight = 8;
  auto load_group = [&](Index e, int p0, Acc* c) {
#pragma unroll
    for (int j = 0; j < kColoursInFlight; ++j)
      c[j] = p0 + j < rank ? Acc(load_value(colours + (p0 + j) * pairs + e)) : Acc{};
  };
  Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Acc next[kColoursInFlight];
  if (e < pairs) load_group(e, 0, next);
  for (; e < pairs; e += stride) {
    const TilePair tp = pair_of(e, signal_tiles, feature_tiles, signal_fast);
    Acc out[kValues];
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      out[k] = Acc{};
#pragma unroll
    for (int p0 = 0; p0 < kColourLoopBound<TILE, Source>; p0 += kColoursInFlight) {
      if (p0 >= rank) break;
      Acc c[kColoursInFlight];
#pragma unroll
      for (int j = 0; j < kColoursInFlight; ++j)
        c[j] = next[j];
      if (p0 + kColoursInFlight < rank)
        load_group(e, p0 + kColoursInFlight, next);
      else if (e + stride < pairs)
        load_group(e + stride, 0, next);
#pragma unroll
      for (int j = 0; j < kColoursInFlight; ++j) {
        const int p = p0 + j;
        if (p >= rank) break;
#pragma unroll
        for (int k = 0; k < kValues; ++k) {
          if (k >= t2) break;
          add_scaled(out[k], coef[p * t2 + k], c[j]);
        }
      }
    }
    const Index first_signal = tp.signal_tile * t;
    D* base = y + tp.feature_tile * t * y_rs + first_signal * y_cs;
    // y = alpha out + beta y (beta == 0 overwrites, so NaNs in Y do not propagate).
    auto update = [&](D* target, Acc value) {
      value = mul(alpha, value);
      if (!is_zero(beta)) value = add(value, mul(beta, Acc(load_value(target))));
      store_value(target, value);
    };
    if (TILE == 4 && contiguity == kFeaturesContiguous) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if (first_signal + i >= batch) break;
        Quad<D>* target = reinterpret_cast<Quad<D>*>(base + i * y_cs);
        Quad<D> q{};
        if (!is_zero(beta)) q = *target;
#pragma unroll
        for (int g = 0; g < 4; ++g)
          update(&q.v[g], out[i + 4 * g]);
        *target = q;
      }
    } else if (TILE == 4 && contiguity == kSignalsContiguous && first_signal + 3 < batch) {
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        Quad<D>* target = reinterpret_cast<Quad<D>*>(base + g * y_rs);
        Quad<D> q{};
        if (!is_zero(beta)) q = *target;
#pragma unroll
        for (int i = 0; i < 4; ++i)
          update(&q.v[i], out[i + 4 * g]);
        *target = q;
      }
    } else {
#pragma unroll
      for (int g = 0; g < (TILE > 0 ? TILE : kStlMaxDeviceTile); ++g) {
        if (g >= t) break;
#pragma unroll
        for (int i = 0; i < (TILE > 0 ? TILE : kStlMaxDeviceTile); ++i) {
          if (i >= t) break;
          if (first_signal + i < batch) update(base + g * y_rs + i * y_cs, out[i + t * g]);
        }
      }
    }
  }
}

// Whether t = 4 tiles of a view can move as aligned Quads along one dimension.
template <class D, class V>
int contiguity_of(const V& view, Index tile) {
  if (tile != 4) return kStrided;
  const bool aligned = reinterpret_cast<std::uintptr_t>(view.data) % (4 * sizeof(D)) == 0;
  if (!aligned) return kStrided;
  if (view.row_stride == 1 && view.col_stride % 4 == 0) return kFeaturesContiguous;
  if (view.col_stride == 1 && view.row_stride % 4 == 0) return kSignalsContiguous;
  return kStrided;
}

// One thread per pair, or (Resident > 0) at most Resident blocks: the blocks the device holds
// at once, each thread then taking several pairs with the next one's loads in flight.
dim3 grid_for(Index pairs, int threads, long long resident = 0) {
  Index blocks = std::min<Index>((pairs + threads - 1) / threads, 65535 * 4);
  if (resident > 0) blocks = std::min<Index>(blocks, resident);
  return dim3(static_cast<unsigned>(blocks));
}

// The blocks of a coding kernel the device holds at once where its coefficients are
// parameters (no dynamic shared memory), else 0 (one thread per pair).
template <auto Kernel, class Source>
long long coding_grid_limit(int threads) {
  if constexpr (Source::kParam)
    return resident_blocks<Kernel>(threads);
  else
    return 0;
}

template <class Storage>
void require_device_tile(Index tile, Index rank) {
  require<DeviceError>(tile <= kStlMaxDeviceTile,
                       "strassen_tile: the GPU kernels take tiles up to ", kStlMaxDeviceTile,
                       ", got t = ", tile, " (apply it on the host)");
  require<DeviceError>(rank * tile * tile * Index(sizeof(StlCoef<Storage>)) <= 48 * 1024,
                       "strassen_tile: rank ", rank, " x tile ", tile,
                       "^2 coefficients exceed the GPU kernels' 48 KB of shared memory");
}

// Calls launch(tile, source) with the tile size as a compile-time constant (0: any) and the
// coefficients as a kernel parameter where the host has them and they fit (t = 4: the tile of
// the issue's layers; other tiles keep shared memory, which also keeps the build lean), else
// as SharedCoefficients.
template <class Coef, class Launch>
void with_coefficients(Index tile, Index rank, const Coef* device, const Coef* host,
                       const Launch& launch) {
  using Four = std::integral_constant<int, 4>;
  using Two = std::integral_constant<int, 2>;
  const Index count = rank * tile * tile;
  if (host != nullptr && count <= kStlParamCoefficients && tile == 4) {
    ParamCoefficients<Coef> param{};
    std::copy(host, host + count, param.v);
    launch(Four{}, param);
    return;
  }
  const SharedCoefficients<Coef> shared{device};
  if (tile == 4)
    launch(Four{}, shared);
  else if (tile == 2)
    launch(Two{}, shared);
  else
    launch(std::integral_constant<int, 0>{}, shared);
}

// Dynamic shared memory of a kernel reading `count` coefficients from `Source`.
template <class Source, class Coef>
std::size_t coefficient_bytes(Index count) {
  return Source::kParam ? 0 : sizeof(Coef) * std::size_t(count);
}

}  // namespace

template <class Storage>
void stl_encode(Index tile, Index rank, const StlCoef<Storage>* encoder,
                const StlCoef<Storage>* encoder_host, ConstView<Storage> X, Storage* colours,
                const StlColourLayout& layout, Context& ctx, bool tensor_cores) {
  require_device_tile<Storage>(tile, rank);
  using D = DeviceScalar<Storage>;
  using Acc = std::conditional_t<is_reduced_precision_v<Storage>, float, D>;
  using Coef = StlCoef<Storage>;
  const Index pairs = layout.pairs();
  if (pairs == 0 || rank == 0) return;
  if constexpr (is_reduced_precision_v<Storage>) {
    if (tensor_cores && stl_coding_mma_takes(tile, rank, X, layout))
      return stl_encode_mma<Storage>(rank, encoder, X, colours, layout, ctx);
  }
  constexpr int threads = 256;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  with_coefficients(tile, rank, encoder, encoder_host, [&](auto tile_constant, const auto& source) {
    using Source = std::decay_t<decltype(source)>;
    constexpr auto kernel = stl_encode_kernel<decltype(tile_constant)::value, D, Acc, Source>;
    kernel<<<grid_for(pairs, threads, coding_grid_limit<kernel, Source>(threads)), threads,
             coefficient_bytes<Source, Coef>(rank * tile * tile), stream>>>(
        int(tile), int(rank), source, reinterpret_cast<const D*>(X.data), X.row_stride,
        X.col_stride, X.cols, layout.signal_tiles, layout.feature_tiles, layout.signal_fast,
        contiguity_of<D>(X, tile), reinterpret_cast<D*>(colours));
  });
  check_launch("stl_encode_kernel");
}

template <class Storage>
void stl_decode(Index tile, Index rank, const StlCoef<Storage>* decoder,
                const StlCoef<Storage>* decoder_host, const Storage* colours,
                const StlColourLayout& layout, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                StlCompute<Storage> beta, Context& ctx, bool tensor_cores) {
  require_device_tile<Storage>(tile, rank);
  using D = DeviceScalar<Storage>;
  using Acc = std::conditional_t<is_reduced_precision_v<Storage>, float, D>;
  using Coef = StlCoef<Storage>;
  const Index pairs = layout.pairs();
  if (pairs == 0) return;
  if constexpr (is_reduced_precision_v<Storage>) {
    if (tensor_cores && stl_coding_mma_takes(tile, rank, Y, layout))
      return stl_decode_mma<Storage>(rank, decoder, colours, layout, Y, alpha, beta, ctx);
  }
  constexpr int threads = 256;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  Acc a, b;
  if constexpr (is_reduced_precision_v<Storage>) {
    a = alpha;
    b = beta;
  } else {
    a = to_device_scalar(alpha);
    b = to_device_scalar(beta);
  }
  with_coefficients(tile, rank, decoder, decoder_host, [&](auto tile_constant, const auto& source) {
    using Source = std::decay_t<decltype(source)>;
    constexpr auto kernel = stl_decode_kernel<decltype(tile_constant)::value, D, Acc, Source>;
    kernel<<<grid_for(pairs, threads, coding_grid_limit<kernel, Source>(threads)), threads,
             coefficient_bytes<Source, Coef>(rank * tile * tile), stream>>>(
        int(tile), int(rank), source, reinterpret_cast<const D*>(colours), layout.signal_tiles,
        layout.feature_tiles, layout.signal_fast, contiguity_of<D>(Y, tile),
        reinterpret_cast<D*>(Y.data), Y.row_stride, Y.col_stride, Y.cols, a, b);
  });
  check_launch("stl_decode_kernel");
}

#define STROP_INSTANTIATE(S)                                                                       \
  template void stl_encode<S>(Index, Index, const StlCoef<S>*, const StlCoef<S>*, ConstView<S>,    \
                              S*, const StlColourLayout&, Context&, bool);                         \
  template void stl_decode<S>(Index, Index, const StlCoef<S>*, const StlCoef<S>*, const S*,        \
                              const StlColourLayout&, MatrixView<S>, StlCompute<S>, StlCompute<S>, \
                              Context&, bool);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
