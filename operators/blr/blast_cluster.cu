// BLAST in one launch, the intermediates on chip (blast_cluster.hpp). A cluster of c =
// max(K, L) CTAs of 128 threads takes 64 signals (tokens) at a time, striding over the
// signals as long as there are more tiles of 64 than resident clusters. CTA q:
// 1. Z1_q^T (64 x r) = X_q^T V_q^T in 64 x 64 tiles (mma_tile.cuh), rounded to 16 bits into
//    its shared buffer z1, stored [t][token] (rows of 64 tokens per rank index t);
// 2. cluster barrier; Z2_q[t] = sum_l s_ql[t] Z1_l[t] over the cluster's z1 buffers
//    (distributed shared memory, 16-byte pieces), fp32 sums rounded once into z2;
// 3. cluster barrier (every z1 read: the next tile may overwrite them); Y_q^T (64 x h) =
//    Z2_q^T U_q^T in 64 x 64 tiles, z2 read in place as the A operand, U_q's chunks staged;
//    each thread writes its pairs of neighbouring rows of Y (alpha, beta) straight from the
//    fragments.
// Operand chunks keep kStages - 1 chunks in flight across the tiles of a stage, so a tile
// starts without waiting for its first loads.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "operators/blr/blast_cluster.hpp"
#include "operators/blr/mma_tile.cuh"
#include "runtime/cluster_device.cuh"
#include "runtime/cluster_launch.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

using namespace mma_tile;

// z1 and z2: [t][token], 64 tokens and kPad values of padding per row (ldmatrix's 8 rows fall
// in distinct banks): the layout of an m-contiguous chunk, so that z2's rows t .. t + 31 are
// the A operand's chunk as it is.
constexpr int kZPitch = OperandPieces<false>::kPitch;
static_assert(kZPitch == kTile + kPad, "z2's chunks are read in place");
constexpr int kPipeValues = kStages * 2 * kChunkValues;

// Rank indices held per buffer: r rounded up to whole 64-wide tiles of stage 1.
__host__ __device__ constexpr Index padded_rank(Index r) {
  return (r + kTile - 1) / kTile * kTile;
}
std::size_t shared_bytes(Index r) {
  return sizeof(uint16_t) * std::size_t(kPipeValues + 2 * padded_rank(r) * kZPitch);
}

struct Shape {
  int K, L, r, r_pad, h, w, batch;
  long long x_ld, y_ld;
};

__device__ __forceinline__ bool vector_ok(const void* p, long long ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 8 == 0;
}

// The products of `tiles` 64 x 64 tiles of one stage, `chunks` chunks of k each, in one
// pipeline: copy(s, a_buf, b_buf) issues chunk s's copies (s = tile * chunks + chunk),
// a_chunk(s, a_buf) gives the A chunk to read (the staged one, or a resident operand's), and
// done(tile, acc) takes a tile's sums (it must not touch the pipeline's buffers).
template <class DS, bool AK, bool BK, class Copy, class AChunk, class Done>
__device__ __forceinline__ void tile_sequence(uint16_t* pipe, int tiles, int chunks, Copy copy,
                                              AChunk a_chunk, Done done) {
  auto a_buf = [&](int s) { return pipe + (s % kStages) * 2 * kChunkValues; };
  auto b_buf = [&](int s) { return a_buf(s) + kChunkValues; };
  const int total = tiles * chunks;
  const int warp = int(threadIdx.x) / 32;
  const int wm = (warp % 2) * 32, wn = (warp / 2) * 32;
  float acc[2][4][4] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < total) copy(s, a_buf(s), b_buf(s));
    commit_copies();
  }
  for (int s = 0; s < total; ++s) {
    wait_copies<kStages - 2>();  // chunk s is in (this thread's pieces)
    __syncthreads();             // everyone's pieces; chunk s - 1's buffers are free
    const int next = s + kStages - 1;
    if (next < total) copy(next, a_buf(next), b_buf(next));
    commit_copies();
    multiply_chunk<DS, AK, BK>(acc, a_chunk(s, a_buf(s)), b_buf(s), wm, wn);
    if (s % chunks == chunks - 1) {
      done(s / chunks, acc, wm, wn);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < 4; ++nj)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[mi][nj][e] = 0.0f;
    }
  }
  wait_copies<0>();
  __syncthreads();  // the buffers are free for what follows
}

// Lane 4 g + t of a warp holds, of each m16n8 block (mi, nj) of its 32 x 32 part, rows g and
// g + 8 (tokens) and columns 2 t, 2 t + 1 (mma16.cuh); calls f(row, column, value pair).
template <class F>
__device__ __forceinline__ void for_each_pair(const float (&acc)[2][4][4], int wm, int wn, F f) {
  const int lane = int(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
#pragma unroll
      for (int half = 0; half < 2; ++half)
        f(wm + 16 * mi + g + 8 * half, wn + 8 * nj + 2 * t, acc[mi][nj][2 * half],
          acc[mi][nj][2 * half + 1]);
}

template <class DS>
__global__ void __launch_bounds__(kThreads)
    blast_cluster_kernel(const __grid_constant__ BlastClusterArgs args) {
  extern __shared__ uint4 shared_words[];  // 16-byte aligned
  uint16_t* shared = reinterpret_cast<uint16_t*>(shared_words);
  const Shape sh{int(args.row_blocks),
                 int(args.col_blocks),
                 int(args.rank),
                 int(padded_rank(args.rank)),
                 int(args.height),
                 int(args.width),
                 int(args.batch),
                 args.x_ld,
                 args.y_ld};
  const int cluster_size = max(sh.K, sh.L);
  const int q = cluster_block_rank();
  const int first_tile = int(blockIdx.x) / cluster_size;
  const int clusters = int(gridDim.x) / cluster_size;
  const int tiles = (sh.batch + kTile - 1) / kTile;
  uint16_t* pipe = shared;
  uint16_t* z1 = shared + kPipeValues;
  uint16_t* z2 = z1 + sh.r_pad * kZPitch;

  const uint16_t* x_q = static_cast<const uint16_t*>(args.x) + (long long)q * sh.w;
  const uint16_t* v_q = static_cast<const uint16_t*>(args.right) + (long long)q * sh.r * sh.w;
  const uint16_t* u_q = static_cast<const uint16_t*>(args.left) + (long long)q * sh.h * sh.r;
  const uint16_t* s_q = static_cast<const uint16_t*>(args.diagonals) + (long long)q * sh.L * sh.r;
  DS* y = static_cast<DS*>(args.y);
  const bool x_vector = vector_ok(x_q, sh.x_ld), v_vector = vector_ok(v_q, sh.r),
             u_vector = vector_ok(u_q, sh.h);
  const bool y_pairs = reinterpret_cast<std::uintptr_t>(y) % 4 == 0 && sh.y_ld % 2 == 0 &&
                       sh.h % 2 == 0;

  for (int tile = first_tile; tile < tiles; tile += clusters) {
    const int j0 = tile * kTile;  // first token

    // 1. Z1_q^T (tokens x t) = X_q^T (tokens x w) V_q^T (w x r): A k-contiguous (X's
    // columns), B n-contiguous (V_q column-major r x w).
    if (q < sh.L) {
      const int chunks = (sh.w + kDepth - 1) / kDepth;
      tile_sequence<DS, true, false>(
          pipe, sh.r_pad / kTile, chunks,
          [&](int s, uint16_t* a_buf, uint16_t* b_buf) {
            const int t0 = (s / chunks) * kTile, c = s % chunks;
            OperandPieces<true>(x_q, sh.x_ld, sh.w, sh.batch, j0, 0, x_vector).copy(a_buf, c);
            OperandPieces<false>(v_q, sh.r, sh.w, sh.r, t0, 0, v_vector).copy(b_buf, c);
          },
          [](int, const uint16_t* a_buf) { return a_buf; },
          [&](int n_tile, const float(&acc)[2][4][4], int wm, int wn) {
            for_each_pair(acc, wm, wn, [&](int token, int t, float lo, float hi) {
              const int row = n_tile * kTile + t;  // z1's rows: rank indices
              const uint32_t pair = pack(DS{}, lo, hi);
              z1[row * kZPitch + token] = uint16_t(pair & 0xffffu);
              z1[(row + 1) * kZPitch + token] = uint16_t(pair >> 16);
            });
          });
    }
    // The couplings s_ql[t] of this output block into the (now idle) operand buffers.
    if (q < sh.K)
      for (int e = int(threadIdx.x); e < sh.L * sh.r; e += kThreads)
        pipe[e] = s_q[e];
    cluster_barrier();

    // 2. z2[t][token] = sum_l s_ql[t] z1_l[t][token]; rows past r stay zero (stage 3's last
    // chunk reads them).
    if (q < sh.K) {
      constexpr int kPieces = kTile / 8;
      for (int e = int(threadIdx.x); e < sh.r_pad * kPieces; e += kThreads) {
        const int t = e / kPieces, offset = t * kZPitch + (e % kPieces) * 8;
        float sum[8] = {};
        if (t < sh.r) {
          // Every block's piece requested before the first is used: the remote reads' latency
          // is paid once per piece, not once per block.
          uint4 v[kBlastClusterMaxBlocks];
#pragma unroll
          for (int l = 0; l < int(kBlastClusterMaxBlocks); ++l)
            if (l < sh.L) v[l] = *reinterpret_cast<const uint4*>(cluster_shared(z1 + offset, l));
#pragma unroll
          for (int l = 0; l < int(kBlastClusterMaxBlocks); ++l) {
            if (l >= sh.L) break;
            const float s = float(reinterpret_cast<const DS*>(pipe)[l * sh.r + t]);
            const uint32_t words[4] = {v[l].x, v[l].y, v[l].z, v[l].w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const float2 f = unpack(DS{}, words[i]);
              sum[2 * i] += s * f.x;
              sum[2 * i + 1] += s * f.y;
            }
          }
        }
        *reinterpret_cast<uint4*>(z2 + offset) =
            make_uint4(pack(DS{}, sum[0], sum[1]), pack(DS{}, sum[2], sum[3]),
                       pack(DS{}, sum[4], sum[5]), pack(DS{}, sum[6], sum[7]));
      }
    }
    cluster_barrier();

    // 3. Y_q^T (tokens x h) = Z2_q^T (tokens x r) U_q^T (r x h): A resident in z2
    // (m-contiguous, chunk c at rows 32 c ..), B n-contiguous (U_q column-major h x r).
    if (q < sh.K) {
      const int chunks = (sh.r + kDepth - 1) / kDepth;
      DS* y_q = y + (long long)q * sh.h;
      tile_sequence<DS, false, false>(
          pipe, (sh.h + kTile - 1) / kTile, chunks,
          [&](int s, uint16_t*, uint16_t* b_buf) {
            OperandPieces<false>(u_q, sh.h, sh.r, sh.h, (s / chunks) * kTile, 0, u_vector)
                .copy(b_buf, s % chunks);
          },
          [&](int s, const uint16_t*) -> const uint16_t* {
            return z2 + (s % chunks) * kDepth * kZPitch;
          },
          [&](int m_tile, const float(&acc)[2][4][4], int wm, int wn) {
            for_each_pair(acc, wm, wn, [&](int token, int col, float lo, float hi) {
              const int i = m_tile * kTile + col, j = j0 + token;
              if (j >= sh.batch || i >= sh.h) return;
              DS* out = y_q + i + (long long)j * sh.y_ld;
              if (y_pairs) {
                float2 v = make_float2(args.alpha * lo, args.alpha * hi);
                if (args.beta != 0.0f) {
                  const float2 old = unpack(DS{}, *reinterpret_cast<const uint32_t*>(out));
                  v.x += args.beta * old.x, v.y += args.beta * old.y;
                }
                *reinterpret_cast<uint32_t*>(out) = pack(DS{}, v.x, v.y);
                return;
              }
              const float value[2] = {lo, hi};
              for (int e = 0; e < 2 && i + e < sh.h; ++e) {
                float v = args.alpha * value[e];
                if (args.beta != 0.0f) v += args.beta * float(out[e]);
                out[e] = DS(v);
              }
            });
          });
    }
  }
}

}  // namespace

bool blast_cluster_takes(Index row_blocks, Index col_blocks, Index rank) {
  const Index c = std::max(row_blocks, col_blocks);
  // The couplings of an output block (L r values) wait in the operand buffers for stage 2.
  return device_has_clusters() && c >= 1 && c <= kBlastClusterMaxBlocks && rank >= 1 &&
         col_blocks * rank <= kPipeValues && shared_bytes(rank) <= shared_memory_per_block();
}

template <class Storage>
void blast_cluster_run(const BlastClusterArgs& a, Context& ctx) {
  require<DeviceError>(blast_cluster_takes(a.row_blocks, a.col_blocks, a.rank),
                       "blast cluster kernel: a grid of ", a.row_blocks, "x", a.col_blocks,
                       " blocks of rank ", a.rank, " does not fit one cluster on this device");
  require<DeviceError>(a.batch < (Index(1) << 31) && a.width * a.rank < (Index(1) << 31) &&
                           a.height * a.rank < (Index(1) << 31),
                       "blast cluster kernel: sizes past 32-bit indices");
  if (a.batch == 0) return;
  using DS = DeviceScalar<Storage>;
  const int cluster = int(std::max(a.row_blocks, a.col_blocks));
  const long long tiles = (a.batch + kTile - 1) / kTile;
  launch_persistent_clusters(blast_cluster_kernel<DS>, a, cluster, kThreads,
                             shared_bytes(a.rank), tiles, static_cast<cudaStream_t>(ctx.stream()),
                             "blast cluster kernel");
}

template void blast_cluster_run<half>(const BlastClusterArgs&, Context&);
template void blast_cluster_run<bfloat16>(const BlastClusterArgs&, Context&);

}  // namespace strop::detail
