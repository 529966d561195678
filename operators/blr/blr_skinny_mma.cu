// The skinny stages on tensor cores, for 16-bit values (half, bfloat16): the same work as the
// CUDA-core kernel (blr_skinny.cu, blr_skinny_device.cuh) with the sums of a warp's rows done
// by mma.sync.m16n8k16 in fp32. The weights are the A operand (their columns as the mma's
// rows), the tokens its n (8 per product, zero-padded; two products for 9-16 tokens), so the
// multiply-adds cost the same few instructions for 1 or 16 tokens and the time stays the
// weights' reading time.
//
// The weights go straight from global memory to registers, in 16-byte loads, without a pass
// through shared memory. Lane 4 g + c of a warp loads, for each 64-column group of the tile,
// columns 8 g ... 8 g + 7 of the k-step's rows 4 c ... 4 c + 3 (8 lanes read 128 contiguous
// bytes of a row). A dot product does not care in which order its depth is summed, and a
// product's rows (our columns) can be any columns as long as the sums are put back where they
// belong, so the mma's logical indices are mapped onto what the lane already holds:
//   - the product's depth 2 c, 2 c + 1, 2 c + 8, 2 c + 9 are rows 4 c ... 4 c + 3;
//   - in product t (0 to 3) of a group, row g is column 8 g + 2 t and row g + 8 column
//     8 g + 2 t + 1: the low and high halves of word t of the lane's loads.
// Each A register is then one byte permutation of two loaded words. The activations are
// staged in shared memory in the matching order: rows in chunks of 4, [chunk][token][4], so
// that a lane's B registers (token g, rows 4 c ... 4 c + 3) are one 8-byte load.
#include <algorithm>
#include <cstdlib>

#include "operators/blr/blr_skinny_device.cuh"
#include "operators/blr/weight_words.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail::skinny {
namespace {

// grid: (split, column tiles, entries), as the CUDA-core kernel's. NT: products of 8 tokens;
// kSteps: k-steps of 16 rows per warp and turn (4 kGroups kSteps loads of 16 bytes in flight
// per lane).
template <class DS, int NT, int kSteps, int kGroups>
__global__ void __launch_bounds__(kThreads, kGroups == 4 ? 1 : 2)
    blr_skinny_mma_kernel(const SkinnyStage g, bool vector) {
  constexpr int TOK = 8 * NT;          // tokens, padded
  constexpr int kTile = 64 * kGroups;  // columns per block (kGroups 64-column groups)
  constexpr int kWarpRows = 16 * kSteps;
  constexpr int kTurnRows = kWarps * kWarpRows;
  constexpr int kStagedRows = kStagedBytes / TOK / int(sizeof(DS));
  static_assert(kStagedRows % kTurnRows == 0, "staged passes hold whole turns");
  extern __shared__ float4 shared_words[];
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const int gq = lane / 4, cq = lane % 4;
  const long long e = blockIdx.z, j = (long long)blockIdx.y * kTile + 8 * gq;
  const auto [p_begin, p_end] = rows_of_block(g.depth, kTurnRows);
  const DS* w = static_cast<const DS*>(g.w.data) + e * g.w.entry + j;
  int valid[kGroups];
#pragma unroll
  for (int G = 0; G < kGroups; ++G) {
    const long long jg = j + 64 * G;
    valid[G] = jg < g.columns ? int(smaller(8, g.columns - jg)) : 0;
  }

  WeightWords<DS, 8> words[kSteps][4][kGroups];
  auto load_turn = [&](long long turn) {
    long long p = turn + warp * kWarpRows + 4 * cq;
    const DS* row = w + p * g.w.row;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int r = 0; r < 4; ++r, ++p, row += g.w.row)
#pragma unroll
        for (int G = 0; G < kGroups; ++G)
          words[s][r][G].load(row + 64 * G, p < p_end ? valid[G] : 0, vector);
      p += 12, row += 12 * g.w.row;
    }
  };

  uint2* staged = reinterpret_cast<uint2*>(shared_words);  // [row / 4][TOK]: 4 values
  // The padding tokens' activations are zeros, written once: the passes write the real
  // tokens only.
  for (int v = int(threadIdx.x); v < kStagedBytes / 8; v += kThreads)
    staged[v] = make_uint2(0, 0);

  let_next_kernel_launch();
  if (p_begin < p_end) load_turn(p_begin);
  wait_for_previous_kernel();

  float acc[kGroups][4][NT][4] = {};
  for (long long q0 = p_begin; q0 < p_end; q0 += kStagedRows) {
    const long long q1 = smaller(p_end, q0 + kStagedRows);
    // Whole turns are staged, zeros past q1, so that every k-step reads finite values (its
    // weights past the block's rows are zeros too). A thread's four values are independent
    // loads, in flight together.
    const int chunks = int((q1 - q0 + kTurnRows - 1) / kTurnRows) * kTurnRows / 4;
    __syncthreads();  // the previous pass is done with the staged values
    if (g.coupling_depth == 0) {
      for (int v = int(threadIdx.x); v < chunks * g.tokens; v += kThreads) {
        const int i = v % g.tokens;
        const long long p = q0 + 4 * (v / g.tokens);
        float x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          x[u] = p + u < q1 ? value_at<DS>(g.s, e, i, p + u) : 0.0f;
        staged[(v / g.tokens) * TOK + i] =
            make_uint2(pack(DS(), x[0], x[1]), pack(DS(), x[2], x[3]));
      }
    } else {  // each value a sum over the coupling's depth: one at a time
      DS* values = reinterpret_cast<DS*>(staged);
      for (int v = int(threadIdx.x); v < chunks * g.tokens * 4; v += kThreads) {
        const int i = v / 4 % g.tokens, chunk = v / 4 / g.tokens;
        const long long p = q0 + 4 * chunk + v % 4;
        values[(chunk * TOK + i) * 4 + v % 4] = DS(p < q1 ? activation<DS>(g, e, i, p) : 0.0f);
      }
    }
    __syncthreads();
    for (long long turn = q0; turn < q1; turn += kTurnRows) {
      if (turn != p_begin) load_turn(turn);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const long long step = turn + warp * kWarpRows + 16 * s;  // the k-step's first row
        if (step >= q1) break;
        const uint2* b = staged + ((step - q0) / 4 + cq) * TOK + gq;
        uint2 tokens[NT];
#pragma unroll
        for (int n = 0; n < NT; ++n)
          tokens[n] = b[8 * n];
#pragma unroll
        for (int G = 0; G < kGroups; ++G)
#pragma unroll
          for (int t = 0; t < 4; ++t) {
            const uint32_t r0 = words[s][0][G].word[t], r1 = words[s][1][G].word[t];
            const uint32_t r2 = words[s][2][G].word[t], r3 = words[s][3][G].word[t];
            // Low halves: column 8 g + 2 t (row g), high halves: 8 g + 2 t + 1 (row g + 8).
            const uint32_t a[4] = {__byte_perm(r0, r1, 0x5410), __byte_perm(r0, r1, 0x7632),
                                   __byte_perm(r2, r3, 0x5410), __byte_perm(r2, r3, 0x7632)};
#pragma unroll
            for (int n = 0; n < NT; ++n)
              mma_add(DS(), acc[G][t][n], a, tokens[n].x, tokens[n].y, acc[G][t][n]);
          }
      }
    }
  }

  // acc[G][t][n][q]: token 8 n + 2 c + (q & 1), column 64 G + 8 g + 2 t + (q >> 1).
  finish_tile<DS, TOK, kTile>(g, reinterpret_cast<float*>(shared_words), [&](auto&& f) {
#pragma unroll
    for (int G = 0; G < kGroups; ++G)
#pragma unroll
      for (int t = 0; t < 4; ++t)
#pragma unroll
        for (int n = 0; n < NT; ++n)
#pragma unroll
          for (int q = 0; q < 4; ++q)
            f(8 * n + 2 * cq + (q & 1), 64 * G + 8 * gq + 2 * t + (q >> 1), acc[G][t][n][q]);
  });
}

template <class DS, int NT, int kSteps, int kGroups>
void launch_mma(const SkinnyStage& g, cudaStream_t stream) {
  constexpr int kTile = 64 * kGroups;
  static_assert(kTile >= kSkinnyMinTile);
  constexpr int TOK = 8 * NT;
  const std::size_t shared =
      std::max<std::size_t>(kStagedBytes, sizeof(float) * std::size_t(kWarps / 2) * TOK * kTile);
  launch_stage(blr_skinny_mma_kernel<DS, NT, kSteps, kGroups>, g, kTile, kWarps * 16 * kSteps,
               shared, weights_aligned(g, sizeof(DS), 16), stream);
}

}  // namespace

template <class DS>
void launch_skinny_mma(const SkinnyStage& g, cudaStream_t stream) {
  // (Session 30 probe, temporary: STROP_SKINNY_STEPS=2 gives one product of tokens two
  // k-steps per turn, at some spilled registers.)
  static const char variant = [] {
    const char* v = std::getenv("STROP_SKINNY_STEPS");
    return v != nullptr ? v[0] : '1';
  }();
  if (g.tokens <= 8) {
    if (variant == '2') return launch_mma<DS, 1, 2, 2>(g, stream);
    if (variant == '4') return launch_mma<DS, 1, 1, 4>(g, stream);
    return launch_mma<DS, 1, 1, 2>(g, stream);
  }
  launch_mma<DS, 2, 1, 2>(g, stream);
}

template void launch_skinny_mma<__half>(const SkinnyStage&, cudaStream_t);
template void launch_skinny_mma<__nv_bfloat16>(const SkinnyStage&, cudaStream_t);

}  // namespace strop::detail::skinny
