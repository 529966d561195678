// The skinny stages of the BLR plans (blr_skinny_kernel.hpp): a product of a few tokens
// whose cost is reading its weights once, one launch per stage, chained by programmatic
// dependent launch.
//
// A block takes one entry, a tile of 32 C consecutive columns (C per lane: one 16-byte load
// of 16-bit weights, fewer with 16 tokens) and a part of the depth. Its 8 warps take turns of
// 16 rows each (8 from 4 tokens on, for the accumulators' registers) with all their loads in
// flight; the activations of the rows are staged in shared memory as fp32. The warps' sums
// meet in shared memory. Where the entries and tiles are too few to fill the GPU, the depth is
// split over the blocks of a thread-block cluster (up to 8), which add their sums through
// distributed shared memory: no atomics, no workspace, nothing to zero.
//
// Chaining: every block first lets the next kernel of the stream launch
// (griddepcontrol.launch_dependents), then issues its first turn of weight loads, and only
// then waits for the previous kernel (griddepcontrol.wait) before it reads activations or
// writes anything. Weights are the operator's constants, which no kernel of the stream
// writes, so a stage's first weight reads overlap the previous stage instead of following
// it. A kernel launched without a programmatic predecessor passes the wait at once.
#include <algorithm>

#include "operators/blr/blr_skinny_kernel.hpp"
#include "operators/blr/weight_words.cuh"
#include "runtime/cluster_device.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kStagedValues = 4096;  // fp32 activations staged at a time
constexpr int kMaxSplit = 8;         // portable cluster size

// Columns per lane: one 16-byte load, at most 64 accumulators per thread.
template <class DS, int TOK>
__host__ __device__ constexpr int columns_per_lane() {
  return 16 / int(sizeof(DS)) < 64 / TOK ? 16 / int(sizeof(DS)) : 64 / TOK;
}
__device__ __forceinline__ long long smaller(long long a, long long b) {
  return a < b ? a : b;
}

// (Programmatic dependent launch needs sm_90; older targets compile without.)
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

// grid: (split, column tiles, entries); the blocks of one (tile, entry) form a cluster when
// split > 1. `vector`: every lane's C weights are one aligned load.
template <class DS, int TOK, int kRowsPerTurn>
__global__ void __launch_bounds__(kThreads, 2) blr_skinny_kernel(const SkinnyStage g, bool vector) {
  constexpr int kTurnRows = kWarps * kRowsPerTurn;  // rows a block takes per turn
  constexpr int C = columns_per_lane<DS, TOK>();
  constexpr int kTile = 32 * C;
  extern __shared__ float4 shared_words[];
  float* shared = reinterpret_cast<float*>(shared_words);
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const int split = int(gridDim.x), part = int(blockIdx.x);
  const long long e = blockIdx.z, tile0 = (long long)blockIdx.y * kTile, j = tile0 + lane * C;

  // This block's rows: whole turns, shared out evenly over the split.
  const long long turns = (g.depth + kTurnRows - 1) / kTurnRows;
  const long long p_begin = turns * part / split * kTurnRows;
  const long long p_end = smaller(g.depth, turns * (part + 1) / split * kTurnRows);
  const DS* w = static_cast<const DS*>(g.w.data) + e * g.w.entry + j;
  const int valid = j < g.columns ? int(smaller(C, g.columns - j)) : 0;

  WeightWords<DS, C> rows[kRowsPerTurn];
  auto load_turn = [&](long long turn) {
#pragma unroll
    for (int r = 0; r < kRowsPerTurn; ++r) {
      const long long p = turn + warp * kRowsPerTurn + r;
      rows[r].load(w + p * g.w.row, p < p_end ? valid : 0, vector);
    }
  };

  let_next_kernel_launch();
  if (p_begin < p_end) load_turn(p_begin);
  wait_for_previous_kernel();

  float acc[TOK][C] = {};
  constexpr int kStagedRows = kStagedValues / TOK;  // a multiple of kTurnRows
  static_assert(kStagedRows % kTurnRows == 0, "staged passes hold whole turns");
  for (long long q0 = p_begin; q0 < p_end; q0 += kStagedRows) {
    const long long q1 = smaller(p_end, q0 + kStagedRows);
    __syncthreads();  // the previous pass is done with the staged values
    for (int v = int(threadIdx.x); v < int(q1 - q0) * TOK; v += kThreads) {
      const int i = v % TOK;
      shared[v] = i < g.tokens ? activation<DS>(g, e, i, q0 + v / TOK) : 0.0f;
    }
    __syncthreads();
    for (long long turn = q0; turn < q1; turn += kTurnRows) {
      if (turn != p_begin) load_turn(turn);
#pragma unroll
      for (int r = 0; r < kRowsPerTurn; ++r) {
        const long long p = turn + warp * kRowsPerTurn + r;
        if (p >= q1) break;
        const float* s = shared + (p - q0) * TOK;
        float x[TOK];
#pragma unroll
        for (int i = 0; i < TOK; ++i)
          x[i] = s[i];
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const float wv = rows[r].value(c);
#pragma unroll
          for (int i = 0; i < TOK; ++i)
            acc[i][c] = fmaf(x[i], wv, acc[i][c]);
        }
      }
    }
  }

  // The warps' sums: each step, the upper half of the active warps hands its sums to the
  // lower half. Then warp 0 holds the block's sums, which go to sums[i][lane C + c].
  float* sums = shared;
  for (int half = kWarps / 2; half >= 1; half /= 2) {
    __syncthreads();
    if (warp >= half && warp < 2 * half)
#pragma unroll
      for (int i = 0; i < TOK; ++i)
#pragma unroll
        for (int c = 0; c < C; ++c)
          sums[((warp - half) * TOK + i) * kTile + lane * C + c] = acc[i][c];
    __syncthreads();
    if (warp < half)
#pragma unroll
      for (int i = 0; i < TOK; ++i)
#pragma unroll
        for (int c = 0; c < C; ++c)
          acc[i][c] += sums[(warp * TOK + i) * kTile + lane * C + c];
  }
  __syncthreads();
  if (warp == 0)
#pragma unroll
    for (int i = 0; i < TOK; ++i)
#pragma unroll
      for (int c = 0; c < C; ++c)
        sums[i * kTile + lane * C + c] = acc[i][c];

  // Each block of the cluster finishes a slice of the tile's columns, adding every block's
  // sums for it.
  const int slice = kTile / split, first = part * slice;
  if (split > 1) {
    cluster_barrier();
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
        sum += cluster_shared(sums, b)[i * kTile + col];
    } else {
      sum = sums[i * kTile + col];
    }
    DS* y = out + i * g.c.row + jj * g.c.col;
    float value = g.alpha * sum;
    if (g.beta != 0.0f) value += g.beta * float(load_value(y));
    store_value(y, value);
  }
  // No block leaves while another may still read its shared memory.
  if (split > 1) cluster_barrier();
}

// The current device's multiprocessors and whether it launches clusters, asked once per
// device (not once per process: a context on another device may be another model, with
// another count and without clusters): each stage's launch is on the few-token hot path.
struct DeviceTraits {
  long long multiprocessors = 0;
  bool clusters = false;
};
const DeviceTraits& device_traits() {
  static PerDevice<DeviceTraits> traits;
  return traits.get([](int) { return DeviceTraits{multiprocessors(), device_has_clusters()}; });
}

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

template <class DS, int TOK, int kRowsPerTurn>
void launch(const SkinnyStage& g, cudaStream_t stream) {
  constexpr int kTurnRows = kWarps * kRowsPerTurn;
  constexpr int C = columns_per_lane<DS, TOK>();
  constexpr int kTile = 32 * C;
  const long long tiles = (g.columns + kTile - 1) / kTile;
  static_assert(kTile >= kSkinnyMinTile);
  require<DeviceError>(tiles <= kSkinnyMaxGrid && g.entries <= kSkinnyMaxGrid,
                       "blr skinny stage: too many columns or entries");
  // Split the depth while the blocks are fewer than one per multiprocessor and every part
  // keeps at least one turn. (A multiprocessor holds two blocks: the other place is for the
  // next stage's blocks, which start reading their weights while this stage runs.)
  const long long turns = (g.depth + kTurnRows - 1) / kTurnRows;
  const DeviceTraits& device = device_traits();
  int split = 1;
  while (split < kMaxSplit && device.clusters &&
         tiles * g.entries * split < device.multiprocessors && turns >= 2 * split)
    split *= 2;
  const bool vector = aligned(g.w.data, C * sizeof(DS)) && g.w.entry % C == 0 && g.w.row % C == 0;
  const std::size_t shared =
      sizeof(float) * std::max<std::size_t>(kStagedValues, std::size_t(kWarps / 2) * TOK * kTile);

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
  // Programmatic dependent launch, like clusters, needs sm_90: on older devices the stages
  // run in plain stream order (and split stays 1).
  config.numAttrs = !device.clusters ? 0 : split > 1 ? 2 : 1;
  check_cuda(cudaLaunchKernelEx(&config, blr_skinny_kernel<DS, TOK, kRowsPerTurn>, g, vector),
             "blr skinny stage");
  check_launch("blr skinny stage");
}

}  // namespace

template <class Storage>
void launch_blr_skinny(const SkinnyStage& g, Context& ctx) {
  using DS = DeviceScalar<Storage>;
  require<DeviceError>(g.tokens >= 1 && g.tokens <= kSkinnyMaxTokens, "blr skinny stage: 1 to ",
                       kSkinnyMaxTokens, " tokens");
  if (g.entries == 0 || g.columns == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  // Rows in flight per warp: 16 where the registers allow (1-2 tokens: 25 % faster than 8 on
  // the Llama-7B layers, H200, session 29), 8 with more accumulators.
  if (g.tokens == 1) return launch<DS, 1, 16>(g, stream);
  if (g.tokens == 2) return launch<DS, 2, 16>(g, stream);
  if (g.tokens <= 4) return launch<DS, 4, 8>(g, stream);
  if (g.tokens <= 8) return launch<DS, 8, 8>(g, stream);
  launch<DS, 16, 8>(g, stream);
}

template void launch_blr_skinny<float>(const SkinnyStage&, Context&);
template void launch_blr_skinny<half>(const SkinnyStage&, Context&);
template void launch_blr_skinny<bfloat16>(const SkinnyStage&, Context&);

}  // namespace strop::detail
