#pragma once
// Internal (CUDA sources only): what the skinny stages' two kernels share (blr_skinny.cu on
// CUDA cores, blr_skinny_mma.cu on tensor cores): the block's share of the depth, the
// chaining by programmatic dependent launch, the activations (read or computed from BLAST's
// folded coupling), the warps' and the cluster's sums, the store, and the launch.
//
// A block takes one entry, a tile of consecutive columns and a part of the depth; its 8
// warps take turns of rows with all their weight loads in flight. Where the entries and tiles
// are too few to fill the GPU, the depth is split over the blocks of a thread-block cluster
// (up to 8), which add their sums through distributed shared memory: no atomics, no
// workspace, nothing to zero.
//
// Chaining: every block first lets the next kernel of the stream launch
// (griddepcontrol.launch_dependents), then issues its first turn of weight loads, and only
// then waits for the previous kernel (griddepcontrol.wait) before it reads activations or
// writes anything. Weights are the operator's constants, which no kernel of the stream
// writes, so a stage's first weight reads overlap the previous stage instead of following
// it. A kernel launched without a programmatic predecessor passes the wait at once.
#include <cooperative_groups.h>

#include <cstdint>

#include "operators/blr/blr_skinny_kernel.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/error.hpp"

namespace strop::detail::skinny {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kStagedBytes = 16384;  // activations staged in shared memory at a time
constexpr int kMaxSplit = 8;         // portable cluster size

__device__ __forceinline__ long long smaller(long long a, long long b) {
  return a < b ? a : b;
}

// (Programmatic dependent launch and clusters need sm_90; older targets compile without.)
__device__ __forceinline__ void wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_next_kernel_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}
// Block b's copy of this block's shared value at `p`, b in this cluster.
__device__ __forceinline__ const float* in_block(const float* p, int b) {
#if __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, b);
#else
  return b == 0 ? p : nullptr;
#endif
}

template <class DS>
__device__ __forceinline__ float value_at(const SkinnyOperand& o, long long e, long long x,
                                          long long y) {
  return float(load_value(static_cast<const DS*>(o.data) + e * o.entry + x * o.row + y * o.col));
}

// S_e(i, p): read, or computed from the folded coupling.
template <class DS>
__device__ __forceinline__ float activation(const SkinnyStage& g, long long e, int i, long long p) {
  if (g.coupling_depth == 0) return value_at<DS>(g.s, e, i, p);
  float sum = 0;
#pragma unroll 8
  for (int q = 0; q < g.coupling_depth; ++q)
    sum = fmaf(value_at<DS>(g.coupling, p, q, e), value_at<DS>(g.coupled, p, i, q), sum);
  return sum;
}

// This block's rows [begin, end): whole turns of `turn_rows`, shared out evenly over the
// split (the grid's x extent).
struct BlockRows {
  long long begin, end;
};
__device__ __forceinline__ BlockRows rows_of_block(long long depth, int turn_rows) {
  const long long split = gridDim.x, part = blockIdx.x;
  const long long turns = (depth + turn_rows - 1) / turn_rows;
  return {turns * part / split * turn_rows, smaller(depth, turns * (part + 1) / split * turn_rows)};
}

// Adds the warps' partial sums of the block's tile (kTile columns from blockIdx.y kTile, TOK
// token rows) and writes the tile: C = alpha sum + beta C for tokens < g.tokens. `for_each_sum(f)`
// calls f(token, column in the tile, this thread's partial sum) for each of the thread's sums.
// `sums` is shared memory of kWarps / 2 x TOK x kTile floats.
template <class DS, int TOK, int kTile, class ForEachSum>
__device__ __forceinline__ void finish_tile(const SkinnyStage& g, float* sums,
                                            ForEachSum&& for_each_sum) {
  const int warp = int(threadIdx.x) / 32;
  // Each step, the upper half of the active warps hands its sums to the lower half. Then
  // warp 0 holds the block's sums, which go to sums[token][column].
  for (int half = kWarps / 2; half >= 1; half /= 2) {
    __syncthreads();
    if (warp >= half && warp < 2 * half)
      for_each_sum(
          [&](int i, int col, float& v) { sums[((warp - half) * TOK + i) * kTile + col] = v; });
    __syncthreads();
    if (warp < half)
      for_each_sum([&](int i, int col, float& v) { v += sums[(warp * TOK + i) * kTile + col]; });
  }
  __syncthreads();
  if (warp == 0) for_each_sum([&](int i, int col, float& v) { sums[i * kTile + col] = v; });

  // Each block of the cluster finishes a slice of the tile's columns, adding every block's
  // sums for it.
  const int split = int(gridDim.x), part = int(blockIdx.x);
  const long long e = blockIdx.z, tile0 = (long long)blockIdx.y * kTile;
  const int slice = kTile / split, first = part * slice;
  if (split > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  DS* out = static_cast<DS*>(const_cast<void*>(g.c.data)) + e * g.c.entry;
  for (int v = int(threadIdx.x); v < TOK * slice; v += kThreads) {
    const int i = v / slice, col = first + v % slice;
    const long long jj = tile0 + col;
    if (i >= g.tokens || jj >= g.columns) continue;
    float sum = 0;
    if (split > 1) {
      for (int b = 0; b < split; ++b)
        sum += in_block(sums, b)[i * kTile + col];
    } else {
      sum = sums[i * kTile + col];
    }
    DS* y = out + i * g.c.row + jj * g.c.col;
    float value = g.alpha * sum;
    if (g.beta != 0.0f) value += g.beta * float(load_value(y));
    store_value(y, value);
  }
  // No block leaves while another may still read its shared memory.
  if (split > 1) cluster_sync();
}

// The current device's multiprocessors and whether it launches clusters, asked once: each
// stage's launch is on the few-token hot path.
struct DeviceTraits {
  long long multiprocessors = 0;
  bool clusters = false;
};
inline const DeviceTraits& device_traits() {
  static const DeviceTraits traits = [] {
    int device = 0, major = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
               "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
    return DeviceTraits{multiprocessors(), major >= 9};
  }();
  return traits;
}

// Whether the weights' rows can be read in aligned loads of `bytes`.
inline bool weights_aligned(const SkinnyStage& g, std::size_t value_bytes, std::size_t bytes) {
  const std::size_t values = bytes / value_bytes;
  return reinterpret_cast<std::uintptr_t>(g.w.data) % bytes == 0 && g.w.entry % values == 0 &&
         g.w.row % values == 0;
}

// Launches `kernel(g, vector)` over (split, column tiles of `tile`, entries) with `shared`
// bytes of dynamic shared memory, as a programmatic dependent launch.
inline void launch_stage(void (*kernel)(SkinnyStage, bool), const SkinnyStage& g, long long tile,
                         long long turn_rows, std::size_t shared, bool vector,
                         cudaStream_t stream) {
  const long long tiles = (g.columns + tile - 1) / tile;
  require<DeviceError>(tiles <= kSkinnyMaxGrid && g.entries <= kSkinnyMaxGrid,
                       "blr skinny stage: too many columns or entries");
  // Split the depth while the blocks are fewer than one per multiprocessor and every part
  // keeps at least one turn. (A multiprocessor holds two blocks: the other place is for the
  // next stage's blocks, which start reading their weights while this stage runs.)
  const long long turns = (g.depth + turn_rows - 1) / turn_rows;
  const DeviceTraits& device = device_traits();
  int split = 1;
  while (split < kMaxSplit && device.clusters &&
         tiles * g.entries * split < device.multiprocessors && turns >= 2 * split)
    split *= 2;

  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attributes[2];
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim.x = unsigned(split);
  attributes[1].val.clusterDim.y = 1;
  attributes[1].val.clusterDim.z = 1;
  config.gridDim = dim3(unsigned(split), unsigned(tiles), unsigned(g.entries));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = split > 1 ? 2 : 1;
  check_cuda(cudaLaunchKernelEx(&config, kernel, g, vector), "blr skinny stage");
  check_launch("blr skinny stage");
}

// The tensor-core stage for 16-bit values (blr_skinny_mma.cu), for 1 to 16 tokens.
template <class DS>
void launch_skinny_mma(const SkinnyStage& g, cudaStream_t stream);

}  // namespace strop::detail::skinny
