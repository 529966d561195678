// small_inner_gemm on tensor cores (blr_plan_kernels.hpp): 16-bit values, k and n <= 16.
// The CUDA-core kernel does k x n fp32 FMAs per row; at b = 16 (BLAST's coupling stage on
// the Llama layers) that is 256 per row, more than its memory time for 16-bit rows. Here
// each tile computes C_j^T (n x m) = op(B_j)^T (n x k) A_j^T (k x m) as m16n8k16 products
// with fp32 accumulation, for 256 rows of one product j:
// - op(B_j)^T, padded to 16 x 16 with zeros, is every warp's A operand;
// - the tile's 256 rows of A_j (16 columns) are staged in shared memory column by column, so
//   that ldmatrix .trans hands out B fragments of 8 rows (tokens) each;
// - the fp32 results go back through shared memory, and C_j's columns are written in 16-byte
//   pieces, with alpha and beta applied and rounded once.
// The kernel is persistent: each block takes tiles gridDim.x apart and stages the next two
// tiles' rows (cp.async, three buffers) and the next op(B_j) values (a register per thread)
// while it multiplies and writes the current one. One tile per block, staged, multiplied, then
// written (session 17's kernel), left the memory idle between the phases: 25.7 us for
// Llama-7B's coupling at 1024 tokens on an H200, whose traffic takes 15.8 us at copy rate.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "operators/blr/blr_plan_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kRows = 256;  // rows of A_j and C_j per tile
constexpr int kWarps = 8;   // 32 rows (four n8 tiles) per warp
constexpr int kThreads = kWarps * 32;
constexpr int kPitch = kRows + 8;   // shared row pitch: 16 bytes of padding spread ldmatrix's rows
constexpr int kPieces = kRows / 8;  // 16-byte pieces (8 values) per column of the tile
// Tiles of rows staged at once: the current one and the next two (5 blocks of 44 KB per SM on
// an H100 keep 80 KB of loads in flight).
constexpr int kBuffers = 3;
static_assert(kThreads == 16 * 16, "one op(B_j) value per thread");

template <class S>
__global__ void __launch_bounds__(kThreads)
    small_inner_mma_kernel(const SmallInnerGemm g, Index row_blocks) {
  __shared__ alignas(16) S a_tiles[kBuffers][16][kPitch];  // A_j(row0 + r, p): [buffer][p][r]
  __shared__ alignas(16) float c_tile[16][kPitch];         // C_j(row0 + r, q) (sums) at [q][r]
  __shared__ float op_b[16][16];                           // op(B_j)(p, q)
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const Index tiles = g.batch * row_blocks;
  // Tile (j, row block): neighbouring blocks take neighbouring products of one row block.
  auto product = [&](Index tile) { return tile % g.batch; };
  auto first_row = [&](Index tile) { return tile / g.batch * kRows; };

  // A_j's rows of `tile` into a_tiles[buffer]: whole 16-byte pieces by cp.async (zeros for
  // columns p >= k and rows past m, which then add nothing), a piece cut by m value by value;
  // one group of copies per call (an empty one past the last tile), so that every turn below
  // commits one.
  auto stage_rows = [&](Index tile, int buffer) {
    if (tile >= tiles) {
      commit_copies();
      return;
    }
    const S* a = static_cast<const S*>(g.a) + product(tile) * g.stride_a;
    const Index row0 = first_row(tile);
    for (int e = int(threadIdx.x); e < 16 * kPieces; e += kThreads) {
      const int p = e / kPieces, piece = e % kPieces;
      const Index row = row0 + 8 * piece;
      S* dst = &a_tiles[buffer][p][8 * piece];
      if (p >= g.k || row + 8 <= g.m || row >= g.m) {
        const bool fill = p < g.k && row < g.m;
        copy_async<16>(dst, fill ? a + row + p * g.lda : a, fill);
      } else {
        for (int i = 0; i < 8; ++i)
          dst[i] = row + i < g.m ? a[row + i + p * g.lda] : S(0.0f);
      }
    }
    commit_copies();
  };
  // This thread's value of op(B_j) for `tile` (thread p * 16 + q holds op(B_j)(p, q)).
  const int bp = int(threadIdx.x) / 16, bq = int(threadIdx.x) % 16;
  auto b_value = [&](Index tile) {
    const S* b = static_cast<const S*>(g.b) + product(tile) * g.stride_b;
    return bp < g.k && bq < g.n
               ? float(load_value(b + (g.trans_b ? bq + bp * g.ldb : bp + bq * g.ldb)))
               : 0.0f;
  };

  Index tile = blockIdx.x;
  if (tile >= tiles) return;
  stage_rows(tile, 0);
  stage_rows(tile + gridDim.x, 1);
  float b_next = b_value(tile);
  const int gr = lane / 4, t = lane % 4;
  // Matrix m of an ldmatrix: k rows 8 (m % 2) ..., tokens 8 (m / 2) ... of the 16-row step.
  const int m = lane / 8, k_row = 8 * (m % 2) + lane % 8;
  const float alpha = float(g.alpha), beta = float(g.beta);
  for (int turn = 0; tile < tiles; ++turn, tile += gridDim.x) {
    const int buffer = turn % kBuffers;
    const Index j = product(tile), row0 = first_row(tile);
    op_b[bp][bq] = b_next;
    wait_copies<kBuffers - 2>();  // this tile's group; the next tile's may be in flight
    // This tile's rows and op(B_j) are in place; the previous turn's reads of c_tile, op_b
    // and its buffer (the one staged next) are done.
    __syncthreads();
    stage_rows(tile + 2 * Index(gridDim.x), (turn + 2) % kBuffers);
    if (tile + gridDim.x < tiles) b_next = b_value(tile + gridDim.x);

    // A operand: (op(B_j)^T)(o, i) = op_b[i][o]; lane 4 gr + t holds rows gr, gr + 8 and
    // columns 2 t, 2 t + 1, 2 t + 8, 2 t + 9 (mma16.cuh).
    const uint32_t operand[4] = {pack(S(), op_b[2 * t][gr], op_b[2 * t + 1][gr]),
                                 pack(S(), op_b[2 * t][gr + 8], op_b[2 * t + 1][gr + 8]),
                                 pack(S(), op_b[2 * t + 8][gr], op_b[2 * t + 9][gr]),
                                 pack(S(), op_b[2 * t + 8][gr + 8], op_b[2 * t + 9][gr + 8])};
#pragma unroll
    for (int step = 0; step < 2; ++step) {
      const int token0 = 32 * warp + 16 * step;
      uint32_t frag[4];  // B fragments: tokens token0 ... (k 0-7, 8-15), token0 + 8 ... (same)
      load_matrices_x4_trans(frag, &a_tiles[buffer][k_row][token0 + 8 * (m / 2)]);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float d[4];
        mma(S(), d, operand, frag[2 * half], frag[2 * half + 1]);
        const int token = token0 + 8 * half + 2 * t;
        *reinterpret_cast<float2*>(&c_tile[gr][token]) = make_float2(d[0], d[1]);
        *reinterpret_cast<float2*>(&c_tile[gr + 8][token]) = make_float2(d[2], d[3]);
      }
    }
    __syncthreads();

    S* c = static_cast<S*>(g.c) + j * g.stride_c;
    for (int e = int(threadIdx.x); e < int(g.n) * kPieces; e += kThreads) {
      const int q = e / kPieces, piece = e % kPieces;
      const Index row = row0 + 8 * piece;
      if (row >= g.m) continue;
      S* out = c + row + q * g.ldc;
      const float* sums = &c_tile[q][8 * piece];
      if (row + 8 <= g.m) {
        uint4 old{};
        if (beta != 0.0f) old = *reinterpret_cast<const uint4*>(out);
        const uint32_t old_words[4] = {old.x, old.y, old.z, old.w};
        uint32_t words[4];
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          float2 v = make_float2(alpha * sums[2 * w], alpha * sums[2 * w + 1]);
          if (beta != 0.0f) {
            const float2 o = unpack(S(), old_words[w]);
            v.x += beta * o.x, v.y += beta * o.y;
          }
          words[w] = pack(S(), v.x, v.y);
        }
        *reinterpret_cast<uint4*>(out) = make_uint4(words[0], words[1], words[2], words[3]);
      } else {
        for (int i = 0; row + i < g.m; ++i) {
          const float v = alpha * sums[i];
          store_value(out + i, beta == 0.0f ? v : v + beta * float(load_value(out + i)));
        }
      }
    }
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

// Up to 8 x 8 the CUDA-core kernel is faster (measured on an H100 at b = 3 and 6: about half
// this kernel's time, whose fixed cost per block of 256 rows is a 16-column tile); from 9 on
// this one (b = 9: 1.05-1.4x, b = 16: 1.25-1.95x; bench/NOTES-blr.md, session 17).
bool small_inner_mma_takes(const SmallInnerGemm& g, std::size_t value_bytes) {
  return value_bytes == 2 && std::max(g.k, g.n) > 8 && g.k <= 16 && g.n <= 16 && aligned16(g.a) &&
         aligned16(g.c) && g.lda % 8 == 0 && g.ldc % 8 == 0 && g.stride_a % 8 == 0 &&
         g.stride_c % 8 == 0;
}

template <class Storage>
void small_inner_mma(const SmallInnerGemm& g, Context& ctx) {
  using S = DeviceScalar<Storage>;
  const Index row_blocks = (g.m + kRows - 1) / kRows;
  require<DeviceError>(g.batch < (Index(1) << 40) && row_blocks < (Index(1) << 20),
                       "small_inner_gemm: too many rows or products");
  // As many blocks as the device holds at once (fewer where there are fewer tiles).
  const Index blocks =
      std::min<Index>(g.batch * row_blocks, resident_blocks<small_inner_mma_kernel<S>>(kThreads));
  small_inner_mma_kernel<S>
      <<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(g, row_blocks);
  check_launch("small_inner_gemm (tensor cores)");
}

template void small_inner_mma<half>(const SmallInnerGemm&, Context&);
template void small_inner_mma<bfloat16>(const SmallInnerGemm&, Context&);

}  // namespace strop::detail
