// The fused multi-factor KS kernel: a whole chain K_1 ... K_L of square-block factors
// (b = c, so every factor is n x n) applied in one kernel. A thread block loads a tile of S
// signals (n values each) into shared memory once, applies the L factors there one after
// the other, and writes the S results once: one global read and one global write for the
// whole chain, instead of L of each for the factor-by-factor path.
//
// A factor with pattern (a, b, b, d) maps each group {i*b*d + k*d + j : k < b} onto itself
// through the b x b block w[i,:,:,j]; groups are disjoint, so a thread that holds one
// group of one signal in registers can overwrite it in place, and the factors need no
// second buffer. The weights are read from global memory (L1/L2: each is shared by the S
// signals of the tile and by every thread block).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "operators/ks/ks_device.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

// Threads per block: radix-2 and radix-4 steps are latency-bound (weight loads, then a few
// FMAs), so their kernels run more warps; radix 16 needs up to 246 registers per thread.
template <int MaxRadix>
constexpr int kThreads = MaxRadix <= 4 ? 512 : 256;
constexpr int kMaxSignals = 32;
// Shared memory a tile may take: two thread blocks per multiprocessor of an H100, so that one
// block's load or store overlaps the other's factors (less on a device whose blocks have less).
constexpr std::size_t kTileBytes = 110 * 1024;

struct Step {
  int a, g, d;  // pattern (a, g, g, d)
  long long w;  // offset of its values in the packed chain
};

// D: the values and the arithmetic; IO: the signals' storage (D, or 16 bits for D = float,
// read into and written from the fp32 tile).
template <class D, class IO = D>
struct ChainArgs {
  const IO* x;
  Index x_rs, x_cs;
  IO* y;
  Index y_rs, y_cs;
  const D* w;
  Index n, batch;
  int signals, ld;  // signals per tile; shared-memory stride of a feature (signals, or + 1)
  int steps;
  bool transposed, conjugate_w;
  D alpha, beta;
  Step step[kMaxChainFactors];
};

template <class D, class IO, int MaxRadix, bool BatchContiguous>
__global__ void __launch_bounds__(kThreads<MaxRadix>)
    ks_chain_fused_kernel(const ChainArgs<D, IO> p) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* xs = reinterpret_cast<D*>(shared_raw);  // xs[feature * ld + signal]
  const Index s0 = Index(blockIdx.x) * p.signals;
  const Index left = p.batch - s0;
  const int tile = left < p.signals ? int(left) : p.signals;
  const int elements = int(p.n) * p.signals;  // fits an int: n * signals <= kTileBytes

  // Load in the memory order of X: signals fastest when each feature's batch is
  // contiguous, features fastest otherwise. Signals past the batch read as zero.
  for (int e = threadIdx.x; e < elements; e += blockDim.x) {
    const Index f = BatchContiguous ? e / p.signals : e % int(p.n);
    const int s = BatchContiguous ? e % p.signals : e / int(p.n);
    xs[f * p.ld + s] = s < tile ? D(load_value(p.x + f * p.x_rs + (s0 + s) * p.x_cs)) : D{};
  }
  __syncthreads();

  // Work item = (group, chunk of the tile's signals), groups fastest so that adjacent
  // threads read adjacent weights. A thread reads its group's weights once for the whole
  // chunk (radix <= 4: all of them in registers; larger radix: again per signal, from
  // L1): the weight loads were the bottleneck when each signal reloaded them from L2.
  // Indices within a tile fit an int (n * signals <= kTileBytes): cheap divisions.
  for (int t = 0; t < p.steps; ++t) {
    const Step st = p.step[t];
    const int groups = st.a * st.d;
    const int chunk =
        max(1, min(p.signals, (groups * p.signals + int(blockDim.x) - 1) / int(blockDim.x)));
    const int chunks = (p.signals + chunk - 1) / chunk;
    const D* w = p.w + st.w;
    for (int item = threadIdx.x; item < groups * chunks; item += blockDim.x) {
      const int group = item % groups;
      const int c0 = (item / groups) * chunk, c1 = min(c0 + chunk, p.signals);
      const int i = group / st.d, j = group % st.d;
      const int first = i * st.g * st.d + j;         // feature of the group's element 0
      const D* wi = w + i * st.g * st.g * st.d + j;  // w[i,k,l,j] at (k g + l) d
      if constexpr (MaxRadix <= 4) {
        // All g x g weights in registers, read once for the whole chunk.
        D wr[MaxRadix][MaxRadix];
#pragma unroll
        for (int k = 0; k < MaxRadix; ++k) {
#pragma unroll
          for (int l = 0; l < MaxRadix; ++l) {
            D wv{};
            if (k < st.g && l < st.g) {
              wv = wi[(p.transposed ? l * st.g + k : k * st.g + l) * st.d];
              if (p.conjugate_w) wv = conjugate(wv);
            }
            wr[k][l] = wv;
          }
        }
        for (int s = c0; s < c1; ++s) {
          D v[MaxRadix];
#pragma unroll
          for (int l = 0; l < MaxRadix; ++l)
            v[l] = l < st.g ? xs[(first + l * st.d) * p.ld + s] : D{};
#pragma unroll
          for (int k = 0; k < MaxRadix; ++k) {
            if (k < st.g) {
              D acc = mul(wr[k][0], v[0]);
#pragma unroll
              for (int l = 1; l < MaxRadix; ++l)
                multiply_add(acc, wr[k][l], v[l]);  // zero weights past g
              xs[(first + k * st.d) * p.ld + s] = acc;
            }
          }
        }
      } else {
        for (int s = c0; s < c1; ++s) {
          D v[MaxRadix];
#pragma unroll
          for (int l = 0; l < MaxRadix; ++l)
            if (l < st.g) v[l] = xs[(first + l * st.d) * p.ld + s];
          D out[MaxRadix];
#pragma unroll
          for (int k = 0; k < MaxRadix; ++k) {
            if (k < st.g) {
              D acc{};
#pragma unroll
              for (int l = 0; l < MaxRadix; ++l) {
                if (l < st.g) {
                  const int at = p.transposed ? l * st.g + k : k * st.g + l;
                  D wv = wi[at * st.d];
                  if (p.conjugate_w) wv = conjugate(wv);
                  multiply_add(acc, wv, v[l]);
                }
              }
              out[k] = acc;
            }
          }
#pragma unroll
          for (int k = 0; k < MaxRadix; ++k)
            if (k < st.g) xs[(first + k * st.d) * p.ld + s] = out[k];
        }
      }
    }
    __syncthreads();
  }

  const bool accumulate = !is_zero(p.beta);
  for (int e = threadIdx.x; e < elements; e += blockDim.x) {
    const Index f = BatchContiguous ? e / p.signals : e % int(p.n);
    const int s = BatchContiguous ? e % p.signals : e / int(p.n);
    if (s >= tile) continue;
    IO* out = p.y + f * p.y_rs + (s0 + s) * p.y_cs;
    D v = mul(p.alpha, xs[f * p.ld + s]);
    if (accumulate) v = add(v, mul(p.beta, D(load_value(out))));
    store_value(out, v);
  }
}

// Signals per tile for n features of `bytes` each, with room for the odd stride
// (0: not even one fits).
int tile_signals(Index n, std::size_t bytes) {
  const std::size_t per_signal = static_cast<std::size_t>(n) * bytes;
  const std::size_t fit = std::min(kTileBytes, shared_memory_per_block()) / per_signal;
  return int(std::min<std::size_t>(kMaxSignals, fit > 0 ? fit - 1 : 0));
}
int odd_stride(int signals) {
  return signals + (signals % 2 == 0 ? 1 : 0);
}

template <class D, class IO, int MaxRadix, bool BatchContiguous>
void launch(const ChainArgs<D, IO>& args, Index tiles, std::size_t shared, cudaStream_t stream) {
  auto kernel = ks_chain_fused_kernel<D, IO, MaxRadix, BatchContiguous>;
  allow_dynamic_shared_memory(kernel, shared, "ks_chain_fused_kernel: shared memory attribute");
  kernel<<<static_cast<unsigned>(tiles), kThreads<MaxRadix>, shared, stream>>>(args);
  check_launch("ks_chain_fused_kernel");
}

}  // namespace

bool ks_chain_fusable(const std::vector<KSPattern>& patterns, std::size_t scalar_bytes) {
  if (patterns.size() < 2 || patterns.size() > std::size_t(kMaxChainFactors)) return false;
  const Index n = patterns.front().rows();
  double weights = 0;
  for (const KSPattern& p : patterns) {
    if (p.b != p.c || p.b > kMaxChainRadix || p.rows() != n) return false;
    weights += double(p.nnz());
  }
  const int signals = tile_signals(n, scalar_bytes);
  if (signals < 2) return false;
  // Each tile reads the whole chain's weights (from L2, shared by all tiles): worth it
  // while that stays within a few times the tile's own traffic (one read, one write).
  return weights <= 4 * 2.0 * double(n) * signals;
}

namespace {

// The chain with values of type T (float for 16-bit Storage) on signals stored as Storage.
template <class T, class Storage>
void chain_fused(const std::vector<KSPattern>& patterns, const T* w_packed, Op op,
                 ConstView<Storage> X, MatrixView<Storage> Y, T alpha, T beta, Context& ctx) {
  using D = DeviceScalar<T>;
  using IO = DeviceScalar<Storage>;
  require<DeviceError>(ks_chain_fusable(patterns, sizeof(T)),
                       "ks_chain_fused_apply: this chain does not fit the fused kernel");
  ChainArgs<D, IO> args{};
  args.x = reinterpret_cast<const IO*>(X.data);
  args.x_rs = X.row_stride;
  args.x_cs = X.col_stride;
  args.y = reinterpret_cast<IO*>(Y.data);
  args.y_rs = Y.row_stride;
  args.y_cs = Y.col_stride;
  args.w = reinterpret_cast<const D*>(w_packed);
  args.n = patterns.front().rows();
  args.batch = X.cols;
  // As many signals as fit, but enough tiles for two thread blocks on every multiprocessor
  // (a butterfly of 256 would otherwise make 128 tiles of 32 signals for 4096 signals).
  args.signals = tile_signals(args.n, sizeof(T));
  const Index wanted_tiles = 2 * Index(multiprocessors());
  while (args.signals > 8 && (X.cols + args.signals - 1) / args.signals < wanted_tiles)
    args.signals /= 2;
  // An odd stride spreads a tile's features over the banks when signals vary slowest.
  args.ld = odd_stride(args.signals);
  args.transposed = op != Op::NoTrans;
  args.conjugate_w = op == Op::Adjoint && is_complex_v<T>;
  args.alpha = to_device_scalar(alpha);
  args.beta = to_device_scalar(beta);
  // K_1 ... K_L X applies K_L first; op(K_1 ... K_L) = op(K_L) ... op(K_1) applies K_1 first.
  const int count = static_cast<int>(patterns.size());
  std::vector<long long> offset(patterns.size() + 1, 0);
  for (int f = 0; f < count; ++f)
    offset[f + 1] = offset[f] + patterns[f].nnz();
  int radix = 1;
  for (int t = 0; t < count; ++t) {
    const int f = args.transposed ? t : count - 1 - t;
    const KSPattern& p = patterns[f];
    args.step[t] = {int(p.a), int(p.b), int(p.d), offset[f]};
    radix = std::max(radix, int(p.b));
  }
  args.steps = count;
  if (X.cols == 0) return;
  const Index tiles = (X.cols + args.signals - 1) / args.signals;
  const std::size_t shared = sizeof(D) * static_cast<std::size_t>(args.n * args.ld);
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  // Batch-contiguous loads coalesce along signals; the others along features.
  const bool batch_contiguous = X.col_stride == 1;
  auto go = [&](auto max_radix) {
    constexpr int R = decltype(max_radix)::value;
    if (batch_contiguous) {
      launch<D, IO, R, true>(args, tiles, shared, stream);
    } else {
      launch<D, IO, R, false>(args, tiles, shared, stream);
    }
  };
  // Radix-2 and radix-4 chains (butterflies, the transforms' default grouping) keep their
  // weights in registers.
  if (radix <= 2) {
    go(std::integral_constant<int, 2>{});
  } else if (radix <= 4) {
    go(std::integral_constant<int, 4>{});
  } else {
    go(std::integral_constant<int, kMaxChainRadix>{});
  }
}

}  // namespace

template <class T>
void ks_chain_fused_apply(const std::vector<KSPattern>& patterns, const T* w_packed, Op op,
                          ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) {
  chain_fused(patterns, w_packed, op, X, Y, alpha, beta, ctx);
}

template <ReducedPrecision Storage>
void ks_chain_fused_apply(const std::vector<KSPattern>& patterns, const float* w_packed, Op op,
                          ConstView<Storage> X, MatrixView<Storage> Y, float alpha, float beta,
                          Context& ctx) {
  chain_fused(patterns, w_packed, op, X, Y, alpha, beta, ctx);
}

template void ks_chain_fused_apply(const std::vector<KSPattern>&, const float*, Op, ConstView<half>,
                                   MatrixView<half>, float, float, Context&);
template void ks_chain_fused_apply(const std::vector<KSPattern>&, const float*, Op,
                                   ConstView<bfloat16>, MatrixView<bfloat16>, float, float,
                                   Context&);

#define STROP_INSTANTIATE(T)                                                                    \
  template void ks_chain_fused_apply(const std::vector<KSPattern>&, const T*, Op, ConstView<T>, \
                                     MatrixView<T>, T, T, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
