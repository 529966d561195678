// The skinny stages of the BLR plans (blr_skinny_kernel.hpp): a product of a few tokens
// whose cost is reading its weights once, one launch per stage, chained by programmatic
// dependent launch (blr_skinny_device.cuh: the block's work, the chaining, the sums).
//
// 16-bit values go to the tensor-core kernel (blr_skinny_mma.cu). float values run here, on
// CUDA cores: each lane takes C consecutive columns of a tile of 32 C (C per lane: one
// 16-byte load, fewer with 16 tokens); the 8 warps take turns of 16 rows each (8 from 4 tokens
// on, for the accumulators' registers) with all their loads in flight; the activations of the
// rows are staged in shared memory as fp32.
#include <algorithm>
#include <cstdlib>

#include "operators/blr/blr_skinny_device.cuh"
#include "operators/blr/weight_words.cuh"

namespace strop::detail {
namespace {

using namespace skinny;

// Columns per lane: one 16-byte load, at most 64 accumulators per thread.
template <class DS, int TOK>
__host__ __device__ constexpr int columns_per_lane() {
  return 16 / int(sizeof(DS)) < 64 / TOK ? 16 / int(sizeof(DS)) : 64 / TOK;
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
  const long long e = blockIdx.z, j = (long long)blockIdx.y * kTile + lane * C;
  const auto [p_begin, p_end] = rows_of_block(g.depth, kTurnRows);
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
  constexpr int kStagedRows = kStagedBytes / int(sizeof(float)) / TOK;
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

  finish_tile<DS, TOK, kTile>(g, shared, [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < TOK; ++i)
#pragma unroll
      for (int c = 0; c < C; ++c)
        f(i, lane * C + c, acc[i][c]);
  });
}

template <class DS, int TOK, int kRowsPerTurn>
void launch(const SkinnyStage& g, cudaStream_t stream) {
  constexpr int C = columns_per_lane<DS, TOK>();
  constexpr int kTile = 32 * C;
  static_assert(kTile >= kSkinnyMinTile);
  const std::size_t shared =
      sizeof(float) *
      std::max<std::size_t>(kStagedBytes / sizeof(float), std::size_t(kWarps / 2) * TOK * kTile);
  launch_stage(blr_skinny_kernel<DS, TOK, kRowsPerTurn>, g, kTile, kWarps * kRowsPerTurn, shared,
               weights_aligned(g, sizeof(DS), C * sizeof(DS)), stream);
}

// (Session 30 probe, temporary: STROP_SKINNY_FMA=1 sends 16-bit values to the CUDA-core
// kernel too, for a same-run comparison.)
bool fma_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("STROP_SKINNY_FMA");
    return v != nullptr && v[0] == '1';
  }();
  return forced;
}

}  // namespace

template <class Storage>
void launch_blr_skinny(const SkinnyStage& g, Context& ctx) {
  using DS = DeviceScalar<Storage>;
  require<DeviceError>(g.tokens >= 1 && g.tokens <= kSkinnyMaxTokens, "blr skinny stage: 1 to ",
                       kSkinnyMaxTokens, " tokens");
  if (g.entries == 0 || g.columns == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  if constexpr (sizeof(DS) == 2) {
    if (!fma_forced()) return skinny::launch_skinny_mma<DS>(g, stream);
  }
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
