// Six 8 x 8 factors in one pass over float batch-first signals: each signal, 8^6 = 262144
// values (1 MB), is held by the shared memory of a cluster of 8 CTAs.
//
// Without it the signal goes through DRAM twice (two passes of three factors each, the square
// kernel), and each pass costs at least the copy time of the whole batch. Here a signal is
// read and written once:
//   1. CTA c loads slice c of the signal (the top index p5 = c: 8^5 values, 128 KB);
//   2. it applies the factors on p0 and p1 to 8 x 8 tiles [p1][p0] held in registers (one
//      thread a tile: 64 values, 1024 multiply-adds), then those on p2 and p3 to tiles
//      [p3][p2] the same way;
//   3. after a cluster barrier, each CTA takes 512 of the 4096 positions (p3..p0): for each,
//      the 8 x 8 tile [p5][p4] of values across the cluster's slices (distributed shared
//      memory), the factors on p4 and p5 in registers, and the 64 outputs y[q5][q4][position]
//      written to the output (128-byte runs per warp);
//   4. a second cluster barrier (every partner has read this slice) before the next signal's
//      loads overwrite it.
// The intermediates stay in fp32: one rounding per multiply-add, like the other float passes.
//
// Bank conflicts: every 64 values of a slice are followed by 4 of padding (`padded`), so that
// the 16-byte reads of eight [p1][p0] tiles (68 values apart) by a quarter warp cover all 32
// banks; the [p3][p2] tiles and the positions of step 3 have a warp read 32 consecutive values.
#include "operators/kron/kron_device.cuh"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cluster_device.cuh"
#include "runtime/cluster_launch.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kP = int(kKronSignalClusterDim);  // 8: factor size, also the cluster's CTAs
constexpr int kG = kKronSignalClusterFactors;   // 6
constexpr int kBlock = 4096;                    // 8^4: the positions p3..p0
constexpr int kSlice = kP * kBlock;             // 8^5: values of a CTA's slice
constexpr int kThreads = 256;
constexpr int kPaddedSlice = kSlice / 64 * 68;
constexpr int kTiles = kSlice / 64;  // 8 x 8 tiles of a slice, in either step
static_assert(kBlock == kP * kP * kP * kP && kG == 6, "six factors of 8");
static_assert(kKronSignalClusterSharedBytes == sizeof(float) * (kPaddedSlice + kG * kP * kP));
static_assert(kTiles % kThreads == 0 && (kBlock / kP) % kThreads == 0, "even shares");

struct SignalArgs {
  const float* g[kG];  // g[i]: the factor on p_i (the run's last factor on p0); null: identity
  long long sq[kG], sp[kG];
  const float* x;
  long long x_bs;
  float* y;
  long long y_bs;
  long long signals;
  float alpha, beta;
  int scale, beta_zero;
};

// Where value v (< kSlice) of a slice lies in shared memory.
__device__ __forceinline__ int padded(int v) {
  return v + 4 * (v >> 6);
}

// The 64 values of a factor (g[q * 8 + p] in shared memory) into registers.
__device__ __forceinline__ void load_factor(float (&G)[kP][kP], const float* g) {
#pragma unroll
  for (int q = 0; q < kP; ++q)
#pragma unroll
    for (int p = 0; p < kP; p += 4) {
      const float4 v = *reinterpret_cast<const float4*>(g + q * kP + p);
      G[q][p] = v.x, G[q][p + 1] = v.y, G[q][p + 2] = v.z, G[q][p + 3] = v.w;
    }
}

// x[r][.] = G x[r][.] for every row r: the factor along the tile's second index.
__device__ __forceinline__ void along_rows(float (&x)[kP][kP], const float* g) {
  float G[kP][kP];
  load_factor(G, g);
#pragma unroll
  for (int r = 0; r < kP; ++r) {
    float out[kP];
#pragma unroll
    for (int q = 0; q < kP; ++q) {
      float s = 0.0f;
#pragma unroll
      for (int p = 0; p < kP; ++p)
        s = fmaf(G[q][p], x[r][p], s);
      out[q] = s;
    }
#pragma unroll
    for (int q = 0; q < kP; ++q)
      x[r][q] = out[q];
  }
}

// x[.][c] = G x[.][c] for every column c: the factor along the tile's first index.
__device__ __forceinline__ void along_columns(float (&x)[kP][kP], const float* g) {
  float G[kP][kP];
  load_factor(G, g);
#pragma unroll
  for (int c = 0; c < kP; ++c) {
    float out[kP];
#pragma unroll
    for (int q = 0; q < kP; ++q) {
      float s = 0.0f;
#pragma unroll
      for (int p = 0; p < kP; ++p)
        s = fmaf(G[q][p], x[p][c], s);
      out[q] = s;
    }
#pragma unroll
    for (int q = 0; q < kP; ++q)
      x[q][c] = out[q];
  }
}

// Issues the copies of slice `rank` of signal `s` into `slice` (one cp.async group).
__device__ __forceinline__ void load_slice(float* slice, long long s, int rank,
                                           const SignalArgs& a) {
  const float* src = a.x + s * a.x_bs + static_cast<long long>(rank) * kSlice;
#pragma unroll 8
  for (int k = 0; k < kSlice / 4 / kThreads; ++k) {
    const int v = 4 * (int(threadIdx.x) + k * kThreads);
    copy_async<16>(slice + padded(v), src + v, true);
  }
  commit_copies();
}

// Step 2: the factors on p0..p3, each thread two [p1][p0] tiles, then two [p3][p2] tiles.
__device__ __forceinline__ void local_factors(float* slice, const float* factors) {
#pragma unroll 1
  for (int t = int(threadIdx.x); t < kTiles; t += kThreads) {
    float x[kP][kP];  // [p1][p0]: 64 contiguous values
    float4* tile = reinterpret_cast<float4*>(slice + 68 * t);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const float4 v = tile[i];
      x[i / 2][4 * (i % 2)] = v.x, x[i / 2][4 * (i % 2) + 1] = v.y;
      x[i / 2][4 * (i % 2) + 2] = v.z, x[i / 2][4 * (i % 2) + 3] = v.w;
    }
    along_rows(x, factors);
    along_columns(x, factors + kP * kP);
#pragma unroll
    for (int i = 0; i < 16; ++i)
      tile[i] = make_float4(x[i / 2][4 * (i % 2)], x[i / 2][4 * (i % 2) + 1],
                            x[i / 2][4 * (i % 2) + 2], x[i / 2][4 * (i % 2) + 3]);
  }
  __syncthreads();
#pragma unroll 1
  for (int t = int(threadIdx.x); t < kTiles; t += kThreads) {
    // Tile (p4, m = p1 p0): values p4 * 4096 + p3 * 512 + p2 * 64 + m.
    float* base = slice + padded((t >> 6) * kBlock + (t & 63));
    float x[kP][kP];  // [p3][p2]
#pragma unroll
    for (int p3 = 0; p3 < kP; ++p3)
#pragma unroll
      for (int p2 = 0; p2 < kP; ++p2)
        x[p3][p2] = base[p3 * 544 + p2 * 68];
    along_rows(x, factors + 2 * kP * kP);
    along_columns(x, factors + 3 * kP * kP);
#pragma unroll
    for (int p3 = 0; p3 < kP; ++p3)
#pragma unroll
      for (int p2 = 0; p2 < kP; ++p2)
        base[p3 * 544 + p2 * 68] = x[p3][p2];
  }
}

// Step 3: this CTA's positions e: the [p5][p4] tile from every slice, the factors on p4 and
// p5, and the outputs y[q5][q4][e].
__device__ __forceinline__ void cluster_factors(float* slice, long long s, int rank,
                                                const float* factors, const SignalArgs& a) {
  const float* sources[kP];
#pragma unroll
  for (int j = 0; j < kP; ++j)
    sources[j] = cluster_shared(slice, j);
  float* y = a.y + s * a.y_bs;
#pragma unroll 1
  for (int e = rank * (kBlock / kP) + int(threadIdx.x); e < (rank + 1) * (kBlock / kP);
       e += kThreads) {
    const int at = padded(e);
    float x[kP][kP];  // [p5][p4]
#pragma unroll
    for (int j = 0; j < kP; ++j)
#pragma unroll
      for (int k = 0; k < kP; ++k)
        x[j][k] = sources[j][at + k * (kBlock / 64 * 68)];
    along_rows(x, factors + 4 * kP * kP);
    along_columns(x, factors + 5 * kP * kP);
#pragma unroll
    for (int q5 = 0; q5 < kP; ++q5)
#pragma unroll
      for (int q4 = 0; q4 < kP; ++q4) {
        float* out = y + q5 * kSlice + q4 * kBlock + e;
        float v = x[q5][q4];
        if (a.scale) {
          v *= a.alpha;
          if (!a.beta_zero) v = fmaf(a.beta, *out, v);
        }
        *out = v;
      }
  }
}

__global__ void __launch_bounds__(kThreads, 1) kron_signal_cluster_kernel(const SignalArgs a) {
  extern __shared__ __align__(128) unsigned char shared_raw[];
  float* slice = reinterpret_cast<float*>(shared_raw);
  float* factors = slice + kPaddedSlice;  // [axis][q][p]
  const int rank = cluster_block_rank();
  const long long stride = gridDim.x / kP;
  long long s = blockIdx.x / kP;
  if (s < a.signals) load_slice(slice, s, rank, a);
  for (int i = int(threadIdx.x); i < kG * kP * kP; i += kThreads) {
    const int axis = i / (kP * kP), q = i / kP % kP, p = i % kP;
    factors[i] = kron_device::factor_value(a.g[axis], a.sq[axis], a.sp[axis], 0, q, p);
  }
  for (; s < a.signals; s += stride) {
    wait_copies<0>();
    __syncthreads();  // the slice has landed for every thread (and the factors are written)
    local_factors(slice, factors);
    cluster_barrier();  // every slice of the cluster is final and visible to it
    cluster_factors(slice, s, rank, factors, a);
    cluster_barrier();  // every partner has read this slice: it may be overwritten
    if (s + stride < a.signals) load_slice(slice, s + stride, rank, a);
  }
}

}  // namespace

bool kron_signal_cluster(std::span<const KronFactorRef<float>> group, ConstView<float> in,
                         MatrixView<float> out, float alpha, float beta, bool scale, Context& ctx) {
  std::vector<KronShape> shapes;
  for (const auto& g : group)
    shapes.push_back({g.P, g.Q});
  if (!kron_signal_cluster_fits(shapes, in.rows, sizeof(float), false)) return false;
  require<ShapeError>(in.rows == out.rows && in.cols == out.cols,
                      "kron_signal_cluster: the output's shape differs from the input's");
  require<ShapeError>(kron_vector_aligned(in) && kron_vector_aligned(out),
                      "kron_signal_cluster: views must be packed batch-first and 16-byte aligned");
  require<DeviceError>(
      device_has_clusters() && kKronSignalClusterSharedBytes <= shared_memory_per_block(),
      "kron_signal_cluster: needs thread-block clusters and ", kKronSignalClusterSharedBytes,
      " bytes of shared memory per block (sm_90)");
  SignalArgs a{};
  for (int i = 0; i < kG; ++i) {
    const KronFactorRef<float>& g = group[kG - 1 - i];  // the last factor acts on p0
    a.g[i] = g.data;
    a.sq[i] = g.stride_q;
    a.sp[i] = g.stride_p;
  }
  a.x = in.data;
  a.x_bs = in.col_stride;
  a.y = out.data;
  a.y_bs = out.col_stride;
  a.signals = in.cols;
  a.alpha = alpha;
  a.beta = beta;
  a.scale = scale;
  a.beta_zero = beta == 0.0f;
  if (a.signals == 0) return true;
  launch_persistent_clusters(kron_signal_cluster_kernel, a, kP, kThreads,
                             kKronSignalClusterSharedBytes, a.signals,
                             static_cast<cudaStream_t>(ctx.stream()), "kron_signal_cluster_kernel");
  return true;
}

}  // namespace strop::detail
