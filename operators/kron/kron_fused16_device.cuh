#pragma once
// Internal: device helpers shared by the 16-bit tensor-core Kron passes
// (kron_fused_pair16.cu, kron_fused_triple16.cu): their kernel arguments, factor values as
// 16-bit fragment pairs and the alpha/beta epilogue of a 16-byte piece of output.
#include <cstdint>
#include <span>

#include "operators/kron/kron_device.cuh"
#include "runtime/cluster_device.cuh"
#include "runtime/mma16.cuh"
#include "strop/core/view.hpp"
#include "strop/operators/kron_matmul.hpp"

namespace strop::detail::kron_device {

// The arguments of a 16-bit fused pass over N factors on batch-first signals cut into chunks
// of prod P features, tiles of chunks, and units of 2^LogCluster tiles (one per CTA of a
// cluster).
template <class S, int N>
struct Fused16Args {
  const float* g[N];  // in the order applied: the run's last factor first; null: identity
  long long sq[N], sp[N];
  const S* x;
  long long x_bs;
  S* y;
  long long y_bs;
  long long chunks;            // K / the chunk's features
  long long units_per_signal;  // chunks / (the tile's chunks << LogCluster of the kernel)
  long long units;             // units_per_signal * B
  float alpha, beta;
  int scale, beta_zero;
};

// Them for the run G_lo .. G_hi (applied hi first) on views `in` and `out` (checked by the
// caller).
template <class S, int N, class Storage>
Fused16Args<S, N> make_fused16_args(std::span<const KronFactorRef<float>> run,
                                    ConstView<Storage> in, MatrixView<Storage> out, float alpha,
                                    float beta, bool scale, long long chunk_features,
                                    long long tile_chunks, int log_cluster) {
  Fused16Args<S, N> a{};
  for (int i = 0; i < N; ++i) {
    const KronFactorRef<float>& g = run[N - 1 - i];
    a.g[i] = g.data;
    a.sq[i] = g.stride_q;
    a.sp[i] = g.stride_p;
  }
  a.x = reinterpret_cast<const S*>(in.data);
  a.x_bs = in.col_stride;
  a.y = reinterpret_cast<S*>(out.data);
  a.y_bs = out.col_stride;
  a.chunks = in.rows / chunk_features;
  a.units_per_signal = a.chunks / tile_chunks >> log_cluster;
  a.units = a.units_per_signal * in.cols;
  a.alpha = alpha;
  a.beta = beta;
  a.scale = scale;
  a.beta_zero = beta == 0.0f;
  return a;
}

// Copies (cp.async, 16 bytes each) this CTA's tile of unit u into xs: tile
// ((u % units_per_signal) << LogCluster) + rank of signal u / units_per_signal, TileChunks
// chunks of Chunk features, the 16-byte unit w of a chunk to element place(w) of its place.
template <int Chunk, int TileChunks, int Threads, int LogCluster, class S, int N, class Place>
__device__ __forceinline__ void load_fused16_tile(S* xs, long long u, int rank,
                                                  const Fused16Args<S, N>& a, Place place) {
  const long long b = u / a.units_per_signal;
  const long long lt = ((u % a.units_per_signal) << LogCluster) + rank;
  const S* src = a.x + b * a.x_bs + lt * (TileChunks * Chunk);
  constexpr int units = TileChunks * Chunk / 8;
  static_assert(units % Threads == 0, "every thread copies as many units");
#pragma unroll
  for (int k = 0; k < units / Threads; ++k) {
    const int i = int(threadIdx.x) + k * Threads;
    const int L = i / (Chunk / 8), w = i % (Chunk / 8);
    detail::copy_async<16>(xs + L * Chunk + place(w), src + 8 * i, true);
  }
}

// The persistent loop of a 16-bit fused pass over units of 2^LogCluster tiles (every CTA of a
// cluster takes the same units, one tile each) through two tile buffers of `tile` elements:
// `load(buffer, unit)` issues a tile's copies, and the next tile's are in flight while
// `work(xs)` computes this one into the CTA's staging, which `store(unit)` writes out once
// the cluster's staging is complete. `setup()` runs once, under the first tile's copies.
template <int LogCluster, class S, int N, class Load, class Setup, class Work, class Store>
__device__ __forceinline__ void run_fused16_units(S* buffers, int tile, const Fused16Args<S, N>& a,
                                                  Load load, Setup setup, Work work, Store store) {
  const long long stride = gridDim.x >> LogCluster;
  long long unit = blockIdx.x >> LogCluster;
  if (unit < a.units) load(buffers, unit);
  commit_copies();
  setup();
  for (int cur = 0; unit < a.units; unit += stride, cur ^= 1) {
    S* xs = buffers + cur * tile;
    if (unit + stride < a.units) load(buffers + (cur ^ 1) * tile, unit + stride);
    commit_copies();
    wait_copies<1>();  // this tile's copies (the group before) have landed
    __syncthreads();   // ... for every thread; and the previous unit's staging is stored
    work(xs);
    if constexpr (LogCluster > 0) {
      // Every staging of the cluster complete and visible to it (release/acquire).
      cluster_barrier();
      store(unit);
      // Every read of the staging (here and remote) done before it is written again.
      // Relaxed: the reads have completed (their values were stored); a release would
      // wait for this CTA's global stores to drain (see kron_fused_square.cu).
      cluster_arrive_relaxed();
      cluster_wait();
    } else {
      __syncthreads();  // the staging is complete (and xs read: it may be refilled)
      store(unit);
    }
  }
}

// The factor G[q][p] as a 16-bit pair (p, p + 1) of row q (float factors, rounded).
template <class S>
__device__ __forceinline__ uint32_t factor_pair(const float* g, long long sq, long long sp, int q,
                                                int p) {
  return pack(S{}, factor_value(g, sq, sp, 0, q, p), factor_value(g, sq, sp, 0, q, p + 1));
}

// The 16 x 16 block of G at rows q0.., columns p0.. as an mma A fragment (rows q, k = p).
template <class S>
__device__ __forceinline__ void factor_a_fragment(uint32_t (&a)[4], const float* g, long long sq,
                                                  long long sp, int q0, int p0) {
  const int lane = int(threadIdx.x) & 31, q = q0 + (lane >> 2), p = p0 + 2 * (lane & 3);
  a[0] = factor_pair<S>(g, sq, sp, q, p);
  a[1] = factor_pair<S>(g, sq, sp, q + 8, p);
  a[2] = factor_pair<S>(g, sq, sp, q, p + 8);
  a[3] = factor_pair<S>(g, sq, sp, q + 8, p + 8);
}

// v = alpha v + beta *y for eight 16-bit values (y is not read when beta_zero), in fp32.
template <class S>
__device__ __forceinline__ void scale_piece(uint4& v, const uint4* y, float alpha, float beta,
                                            int beta_zero) {
  const uint4 old = beta_zero ? uint4{} : *y;
  uint32_t* out = &v.x;
  const uint32_t* prior = &old.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 acc = unpack(S{}, out[k]), y0 = unpack(S{}, prior[k]);
    float lo = alpha * acc.x, hi = alpha * acc.y;
    if (!beta_zero) {
      lo += beta * y0.x;
      hi += beta * y0.y;
    }
    out[k] = pack(S{}, lo, hi);
  }
}

}  // namespace strop::detail::kron_device
