// Six 8 x 8 factors in one pass over float batch-first signals: each signal, 8^6 = 262144
// values (1 MB), is held by the shared memory of a cluster of 8 CTAs.
//
// Without it the signal goes through DRAM twice (two passes of three factors each, the square
// kernel), and each pass costs at least the copy time of the whole batch. Here a signal is
// read and written once:
//   1. CTA c loads slice c of the signal (the top index p5 = c: 8^5 values, 128 KB) in 8
//      blocks of 4096 (p4 = 0..7), each block a cp.async group. As each block lands, the
//      CTA applies the factors on p0..p3 to it in place (fibers of 8 values);
//   2. then the factor on p4, across the blocks; the slice is now [p5 = c][q4][q3..q0];
//   3. after a cluster barrier, CTA c computes the output rows with q4 = c: for every
//      position e of a block it reads block c of all 8 slices (distributed shared memory:
//      the fiber along p5), applies the factor on p5 and writes y[q5][c][e] for q5 = 0..7,
//      eight runs of 16 KB per signal;
//   4. a second cluster barrier (every partner has read this slice) before the next signal's
//      loads overwrite it.
// The intermediates stay in fp32 in shared memory: one rounding per multiply-add, like the
// other float passes.
//
// Bank conflicts: every 64 values of a slice are followed by 8 of padding (`padded`), so
// that the fibers of the factor on p1 (8 apart) spread a warp over 32 banks; the fibers on
// p0 (8 contiguous values, two 16-byte reads) start each read at a half-piece offset chosen
// so that a quarter warp covers all banks; the others read 32 consecutive values per warp.
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
constexpr int kBlock = 4096;                    // 8^4: values of a block (p3..p0)
constexpr int kSlice = kP * kBlock;             // 8^5: values of a CTA's slice
constexpr int kThreads = 256;
constexpr int kPaddedSlice = kSlice / 64 * 72;
static_assert(kBlock == kP * kP * kP * kP && kG == 6, "blocks hold p3..p0 of a 6-factor signal");
static_assert(kKronSignalClusterSharedBytes == sizeof(float) * (kPaddedSlice + kG * kP * kP));

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
  return v + 8 * (v >> 6);
}

// The 64 values of a factor from shared memory (g[q * 8 + p]) into registers.
__device__ __forceinline__ void load_factor(float (&G)[kP][kP], const float* g) {
#pragma unroll
  for (int q = 0; q < kP; ++q)
#pragma unroll
    for (int p = 0; p < kP; p += 4) {
      const float4 v = *reinterpret_cast<const float4*>(g + q * kP + p);
      G[q][p] = v.x, G[q][p + 1] = v.y, G[q][p + 2] = v.z, G[q][p + 3] = v.w;
    }
}

__device__ __forceinline__ void apply_factor(const float (&G)[kP][kP], const float (&in)[kP],
                                             float (&out)[kP]) {
#pragma unroll
  for (int q = 0; q < kP; ++q) {
    float s = 0.0f;
#pragma unroll
    for (int p = 0; p < kP; ++p)
      s = fmaf(G[q][p], in[p], s);
    out[q] = s;
  }
}

// The factor on axis `Axis` (stride 8^Axis) applied in place to the `Values` values from slice
// value `first` (a multiple of 64), every fiber of 8 by one thread.
template <int Axis, int Values>
__device__ __forceinline__ void transform_axis(float* slice, int first, const float* g) {
  float G[kP][kP];
  load_factor(G, g);
  constexpr int stride = Axis == 0 ? 1 : kP << (3 * (Axis - 1));
  constexpr int fibers = Values / kP;
  static_assert(fibers % kThreads == 0, "every thread takes as many fibers");
  float* base = slice + padded(first);
#pragma unroll 2
  for (int f = int(threadIdx.x); f < fibers; f += kThreads) {
    float in[kP], out[kP];
    if constexpr (Axis == 0) {
      // Fiber f: values 8 f .. 8 f + 7, two 16-byte reads; threads 4-7 of each quarter warp
      // take the second half first, so the quarter warp's first reads cover all 32 banks.
      float* at = base + padded(kP * f);
      const int first_half = 4 * ((f >> 2) & 1);
      const float4 a = *reinterpret_cast<const float4*>(at + first_half);
      const float4 b = *reinterpret_cast<const float4*>(at + (4 - first_half));
      const float4 lo = first_half ? b : a, hi = first_half ? a : b;
      in[0] = lo.x, in[1] = lo.y, in[2] = lo.z, in[3] = lo.w;
      in[4] = hi.x, in[5] = hi.y, in[6] = hi.z, in[7] = hi.w;
      apply_factor(G, in, out);
      const float4 o_lo = make_float4(out[0], out[1], out[2], out[3]);
      const float4 o_hi = make_float4(out[4], out[5], out[6], out[7]);
      *reinterpret_cast<float4*>(at + first_half) = first_half ? o_hi : o_lo;
      *reinterpret_cast<float4*>(at + (4 - first_half)) = first_half ? o_lo : o_hi;
    } else {
      const int low = f % stride, high = f / stride;
      const int start = high * stride * kP + low;
#pragma unroll
      for (int p = 0; p < kP; ++p)
        in[p] = base[padded(start + p * stride)];
      apply_factor(G, in, out);
#pragma unroll
      for (int q = 0; q < kP; ++q)
        base[padded(start + q * stride)] = out[q];
    }
  }
}

// Issues the copies of slice `rank` of signal `s` into `slice`: one cp.async group per block.
__device__ __forceinline__ void load_slice(float* slice, long long s, int rank,
                                           const SignalArgs& a) {
  const float* src = a.x + s * a.x_bs + static_cast<long long>(rank) * kSlice;
#pragma unroll
  for (int block = 0; block < kP; ++block) {
#pragma unroll
    for (int k = 0; k < kBlock / 4 / kThreads; ++k) {
      const int v = block * kBlock + 4 * (int(threadIdx.x) + k * kThreads);
      copy_async<16>(slice + padded(v), src + v, true);
    }
    commit_copies();
  }
}

// Waits for block `Block` of the slice, then applies the factors on p0..p3 to it.
template <int Block>
__device__ __forceinline__ void transform_block(float* slice, const float* factors) {
  wait_copies<kP - 1 - Block>();
  __syncthreads();  // every thread's copies of the block have landed
  transform_axis<0, kBlock>(slice, Block * kBlock, factors);
  __syncthreads();
  transform_axis<1, kBlock>(slice, Block * kBlock, factors + 1 * kP * kP);
  __syncthreads();
  transform_axis<2, kBlock>(slice, Block * kBlock, factors + 2 * kP * kP);
  __syncthreads();
  transform_axis<3, kBlock>(slice, Block * kBlock, factors + 3 * kP * kP);
  if constexpr (Block + 1 < kP) transform_block<Block + 1>(slice, factors);
}

// Step 3: output rows [q5][rank][e] of signal s from block `rank` of every slice.
__device__ __forceinline__ void store_rows(float* slice, long long s, int rank, const float* factor,
                                           const SignalArgs& a) {
  float G[kP][kP];
  load_factor(G, factor);
  const float* sources[kP];
#pragma unroll
  for (int j = 0; j < kP; ++j)
    sources[j] = cluster_shared(slice, j) + padded(rank * kBlock);
  float* y = a.y + s * a.y_bs + static_cast<long long>(rank) * kBlock;
#pragma unroll 2
  for (int e = 4 * int(threadIdx.x); e < kBlock; e += 4 * kThreads) {
    float4 v[kP];
#pragma unroll
    for (int j = 0; j < kP; ++j)
      v[j] = *reinterpret_cast<const float4*>(sources[j] + padded(e));
#pragma unroll
    for (int q = 0; q < kP; ++q) {
      float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
      for (int j = 0; j < kP; ++j) {
        o.x = fmaf(G[q][j], v[j].x, o.x);
        o.y = fmaf(G[q][j], v[j].y, o.y);
        o.z = fmaf(G[q][j], v[j].z, o.z);
        o.w = fmaf(G[q][j], v[j].w, o.w);
      }
      auto* out = reinterpret_cast<float4*>(y + static_cast<long long>(q) * kSlice + e);
      if (a.scale) {
        o.x *= a.alpha, o.y *= a.alpha, o.z *= a.alpha, o.w *= a.alpha;
        if (!a.beta_zero) {
          const float4 old = *out;
          o.x = fmaf(a.beta, old.x, o.x), o.y = fmaf(a.beta, old.y, o.y);
          o.z = fmaf(a.beta, old.z, o.z), o.w = fmaf(a.beta, old.w, o.w);
        }
      }
      *out = o;
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
  // (The factors are visible to every thread after transform_block's first barrier.)
  for (; s < a.signals; s += stride) {
    transform_block<0>(slice, factors);
    __syncthreads();
    transform_axis<4, kSlice>(slice, 0, factors + 4 * kP * kP);
    cluster_barrier();  // every slice of the cluster is final and visible to it
    store_rows(slice, s, rank, factors + 5 * kP * kP, a);
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
