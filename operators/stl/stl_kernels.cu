// Encode and decode kernels of the Strassen-Tile operator: one thread per (signal tile,
// feature tile) pair holds the pair's t^2 values in registers and the shared r x t^2
// coefficients in shared memory. Consecutive threads take consecutive pairs in the memory
// order of the batch (StlColourLayout), so both the batch and the colours are accessed
// with coalesced loads and stores.
#include <algorithm>
#include <cstdint>

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

template <class Coef>
__device__ void load_coefficients(const Coef* global, Coef* shared, int count) {
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    shared[i] = global[i];
  __syncthreads();
}

// Four consecutive values of a batch, read or written by one vector access (t = 4 tiles
// along the contiguous dimension of an aligned batch: StlContiguity, stl_kernels.hpp).
template <class D>
struct alignas(4 * sizeof(D)) Quad {
  D v[4];
};

// TILE > 0: the tile size known at compile time (registers); TILE == 0: any t <= 8.
template <int TILE, class D, class Acc, class Coef>
__global__ void stl_encode_kernel(int t_runtime, int rank, const Coef* encoder, const D* x,
                                  Index x_rs, Index x_cs, Index batch, Index signal_tiles,
                                  Index feature_tiles, bool signal_fast, int contiguity,
                                  D* colours) {
  extern __shared__ unsigned char shared_bytes[];
  Coef* coef = reinterpret_cast<Coef*>(shared_bytes);
  const int t = TILE > 0 ? TILE : t_runtime;
  const int t2 = t * t;
  load_coefficients(encoder, coef, rank * t2);
  constexpr int kValues = TILE > 0 ? TILE * TILE : kStlMaxDeviceTile * kStlMaxDeviceTile;
  const Index pairs = signal_tiles * feature_tiles;
  for (Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x; e < pairs;
       e += Index(gridDim.x) * blockDim.x) {
    const TilePair tp = pair_of(e, signal_tiles, feature_tiles, signal_fast);
    Acc v[kValues];
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
    for (int p = 0; p < rank; ++p) {
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

template <int TILE, class D, class Acc, class Coef>
__global__ void stl_decode_kernel(int t_runtime, int rank, const Coef* decoder, const D* colours,
                                  Index signal_tiles, Index feature_tiles, bool signal_fast,
                                  int contiguity, D* y, Index y_rs, Index y_cs, Index batch,
                                  Acc alpha, Acc beta) {
  extern __shared__ unsigned char shared_bytes[];
  Coef* coef = reinterpret_cast<Coef*>(shared_bytes);
  const int t = TILE > 0 ? TILE : t_runtime;
  const int t2 = t * t;
  load_coefficients(decoder, coef, rank * t2);
  constexpr int kValues = TILE > 0 ? TILE * TILE : kStlMaxDeviceTile * kStlMaxDeviceTile;
  const Index pairs = signal_tiles * feature_tiles;
  for (Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x; e < pairs;
       e += Index(gridDim.x) * blockDim.x) {
    const TilePair tp = pair_of(e, signal_tiles, feature_tiles, signal_fast);
    Acc out[kValues];
#pragma unroll
    for (int k = 0; k < kValues; ++k)
      out[k] = Acc{};
    // The colours are read kColoursInFlight at a time: one 2-8 byte load per colour and
    // thread, so the loop is bound by load latency unless several are in flight (measured on
    // the H100: 0.28 ms for the decode at n = 8192, r = 32 with one or two in flight).
    constexpr int kColoursInFlight = 8;
    for (int p0 = 0; p0 < rank; p0 += kColoursInFlight) {
      Acc c[kColoursInFlight];
#pragma unroll
      for (int j = 0; j < kColoursInFlight; ++j)
        c[j] = p0 + j < rank ? Acc(load_value(colours + (p0 + j) * pairs + e)) : Acc{};
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

dim3 grid_for(Index pairs, int threads) {
  return dim3(static_cast<unsigned>(std::min<Index>((pairs + threads - 1) / threads, 65535 * 4)));
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

// Whether the tensor-core kernels take a 16-bit encode or decode (stl_coding_mma.cu).
bool tensor_core_coding(Index tile, Index rank, int contiguity) {
  return stl_coding() == StlCoding::TensorCores && tile == 4 && rank <= kStlCodingMaxRank &&
         contiguity != kStrided;
}

}  // namespace

template <class Storage>
void stl_encode(Index tile, Index rank, const StlCoef<Storage>* encoder, ConstView<Storage> X,
                Storage* colours, const StlColourLayout& layout, Context& ctx) {
  require_device_tile<Storage>(tile, rank);
  using D = DeviceScalar<Storage>;
  using Acc = std::conditional_t<is_reduced_precision_v<Storage>, float, D>;
  using Coef = StlCoef<Storage>;
  const Index pairs = layout.pairs();
  if (pairs == 0 || rank == 0) return;
  const int contiguity = contiguity_of<D>(X, tile);
  if constexpr (is_reduced_precision_v<Storage>) {
    if (tensor_core_coding(tile, rank, contiguity))
      return stl_encode_mma<Storage>(rank, encoder, X, colours, layout, contiguity, ctx);
  }
  constexpr int threads = 256;
  const std::size_t shared = sizeof(Coef) * std::size_t(rank * tile * tile);
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto launch = [&](auto kernel) {
    kernel<<<grid_for(pairs, threads), threads, shared, stream>>>(
        int(tile), int(rank), encoder, reinterpret_cast<const D*>(X.data), X.row_stride,
        X.col_stride, X.cols, layout.signal_tiles, layout.feature_tiles, layout.signal_fast,
        contiguity, reinterpret_cast<D*>(colours));
  };
  if (tile == 4) {
    launch(stl_encode_kernel<4, D, Acc, Coef>);
  } else if (tile == 2) {
    launch(stl_encode_kernel<2, D, Acc, Coef>);
  } else {
    launch(stl_encode_kernel<0, D, Acc, Coef>);
  }
  check_launch("stl_encode_kernel");
}

template <class Storage>
void stl_decode(Index tile, Index rank, const StlCoef<Storage>* decoder, const Storage* colours,
                const StlColourLayout& layout, MatrixView<Storage> Y, StlCompute<Storage> alpha,
                StlCompute<Storage> beta, Context& ctx) {
  require_device_tile<Storage>(tile, rank);
  using D = DeviceScalar<Storage>;
  using Acc = std::conditional_t<is_reduced_precision_v<Storage>, float, D>;
  using Coef = StlCoef<Storage>;
  const Index pairs = layout.pairs();
  if (pairs == 0) return;
  const int contiguity = contiguity_of<D>(Y, tile);
  if constexpr (is_reduced_precision_v<Storage>) {
    if (tensor_core_coding(tile, rank, contiguity))
      return stl_decode_mma<Storage>(rank, decoder, colours, layout, Y, alpha, beta, contiguity,
                                     ctx);
  }
  constexpr int threads = 256;
  const std::size_t shared = sizeof(Coef) * std::size_t(rank * tile * tile);
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  Acc a, b;
  if constexpr (is_reduced_precision_v<Storage>) {
    a = alpha;
    b = beta;
  } else {
    a = to_device_scalar(alpha);
    b = to_device_scalar(beta);
  }
  auto launch = [&](auto kernel) {
    kernel<<<grid_for(pairs, threads), threads, shared, stream>>>(
        int(tile), int(rank), decoder, reinterpret_cast<const D*>(colours), layout.signal_tiles,
        layout.feature_tiles, layout.signal_fast, contiguity, reinterpret_cast<D*>(Y.data),
        Y.row_stride, Y.col_stride, Y.cols, a, b);
  };
  if (tile == 4) {
    launch(stl_decode_kernel<4, D, Acc, Coef>);
  } else if (tile == 2) {
    launch(stl_decode_kernel<2, D, Acc, Coef>);
  } else {
    launch(stl_decode_kernel<0, D, Acc, Coef>);
  }
  check_launch("stl_decode_kernel");
}

#define STROP_INSTANTIATE(S)                                                                     \
  template void stl_encode<S>(Index, Index, const StlCoef<S>*, ConstView<S>, S*,                 \
                              const StlColourLayout&, Context&);                                 \
  template void stl_decode<S>(Index, Index, const StlCoef<S>*, const S*, const StlColourLayout&, \
                              MatrixView<S>, StlCompute<S>, StlCompute<S>, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
