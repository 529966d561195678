#pragma once
// The 64 x 64 tensor-core tile of the BLR kernels (blr_fused.cu, blast_cluster.cu), internal
// header for CUDA sources: operand chunks of 32 k staged in shared memory by cp.async
// (OperandPieces: 16-byte pieces, zeros past the edges, either contiguity), and four warps of
// 32 x 32 reading m16n8k16 fragments from them with ldmatrix (multiply_chunk), fp32 sums.
#include <algorithm>
#include <cstdint>

#include "runtime/mma16.cuh"

namespace strop::detail::mma_tile {

constexpr int kTile = 64;   // rows and columns of a C tile
constexpr int kDepth = 32;  // k per chunk
constexpr int kStages = 4;  // chunks in flight
constexpr int kWarps = 4;   // 2 x 2 warps of 32 x 32
constexpr int kThreads = kWarps * 32;
constexpr int kPad = 8;  // 16 bytes per shared row: ldmatrix's 8 rows fall in distinct banks
// One operand chunk in shared memory: [kTile][kDepth + kPad] (k contiguous) or
// [kDepth][kTile + kPad] (m or n contiguous).
constexpr int kChunkValues = std::max(kTile * (kDepth + kPad), kDepth*(kTile + kPad));
static_assert(kTile * kDepth / 8 == 2 * kThreads, "two 16-byte pieces per thread and chunk");

constexpr int log2_of(int v) {
  return v > 1 ? 1 + log2_of(v / 2) : 0;
}
static_assert((1 << log2_of(kDepth / 8)) * 8 == kDepth && (1 << log2_of(kTile / 8)) * 8 == kTile,
              "16-byte pieces per shared row: a power of two");

// Where this thread's two 16-byte pieces of an operand's chunks come from and go to. A chunk
// is a grid of (outer, contiguous) positions: k contiguous (KContiguous: outer = the m or n
// index, a shared row of kDepth + kPad values) or m / n contiguous (outer = k, rows of
// kTile + kPad). Everything that does not change from chunk to chunk is worked out once per
// tile (the pieces' source pointers, shared offsets and positions); a chunk only moves the
// pointers by `step` and k by kDepth.
template <bool KContiguous>
struct OperandPieces {
  static constexpr int kPitch = KContiguous ? kDepth + kPad : kTile + kPad;
  static constexpr int kRowShift = KContiguous ? log2_of(kDepth / 8) : log2_of(kTile / 8);
  const uint16_t* src[2];  // at the tile's first chunk
  int dst[2];              // values from the chunk buffer's start
  int k[2];                // the piece's (first) k at the first chunk
  int mn[2];               // its (first) m or n position
  long long step;          // source values between chunks
  int k_extent, mn_extent;
  bool vector;

  // The tile's pieces: m / n positions from mn0, k from k0.
  // `ld`: source values between outer positions.
  __device__ __forceinline__ OperandPieces(const void* entry, long long ld, int k_extent_,
                                           int mn_extent_, int mn0, int k0, bool vector_)
      : step(KContiguous ? kDepth : kDepth * ld),
        k_extent(k_extent_),
        mn_extent(mn_extent_),
        vector(vector_) {
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int index = int(threadIdx.x) + q * kThreads;
      const int outer = index >> kRowShift, contiguous = (index & ((1 << kRowShift) - 1)) * 8;
      dst[q] = outer * kPitch + contiguous;
      k[q] = k0 + (KContiguous ? contiguous : outer);
      mn[q] = mn0 + (KContiguous ? outer : contiguous);
      src[q] = static_cast<const uint16_t*>(entry) +
               (KContiguous ? k[q] + mn[q] * ld : mn[q] + k[q] * ld);
    }
  }

  // Issues chunk c's copies into `shared`: cp.async where a piece is whole and aligned (or
  // wholly outside: zeros), value by value at ragged or unaligned edges.
  __device__ __forceinline__ void copy(uint16_t* shared, int c) const {
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int kq = k[q] + c * kDepth;
      const uint16_t* p = src[q] + c * step;
      const int contiguous = KContiguous ? kq : mn[q];
      const int contiguous_extent = KContiguous ? k_extent : mn_extent;
      const bool inside = kq < k_extent && mn[q] < mn_extent;
      if (!inside || (vector && contiguous + 8 <= contiguous_extent)) {
        copy_async<16>(shared + dst[q], inside ? p : src[0], inside);
      } else {
        uint16_t v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          v[e] = contiguous + e < contiguous_extent ? p[e] : uint16_t(0);
        *reinterpret_cast<uint4*>(shared + dst[q]) =
            make_uint4(v[0] | uint32_t(v[1]) << 16, v[2] | uint32_t(v[3]) << 16,
                       v[4] | uint32_t(v[5]) << 16, v[6] | uint32_t(v[7]) << 16);
      }
    }
  }
};

// The products of one chunk for this warp's 32 x 32 part of the tile (rows wm.., columns
// wn..). A chunk: op(A)(i, kk) at [i][kk] (AK: k contiguous) or [kk][i]; B chunk likewise.
// The layouts are template parameters so that every shared address is a per-thread base plus
// a constant.
template <class DS, bool AK, bool BK>
__device__ __forceinline__ void multiply_chunk(float (&acc)[2][4][4], const uint16_t* a,
                                               const uint16_t* b, int wm, int wn) {
  constexpr int kAPitch = OperandPieces<AK>::kPitch, kBPitch = OperandPieces<BK>::kPitch;
  const int lane = int(threadIdx.x) % 32, m = lane / 8, r = lane % 8;
#pragma unroll
  for (int ks = 0; ks < kDepth; ks += 16) {
    uint32_t af[2][4], bf[4][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
      // Matrix m: rows (m % 2) * 8.., k (m / 2) * 8.. of the 16 x 16 fragment.
      const int row = wm + 16 * mi + (m % 2) * 8, kk = ks + (m / 2) * 8;
      if constexpr (AK)
        load_matrices_x4(af[mi], a + (row + r) * kAPitch + kk);
      else
        load_matrices_x4_trans(af[mi], a + (kk + r) * kAPitch + row);
    }
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      // Matrix m: columns of n8 block 2 pair + m / 2, k (m % 2) * 8..
      const int col = wn + 8 * (2 * pair + m / 2), kk = ks + (m % 2) * 8;
      uint32_t q[4];
      if constexpr (BK)
        load_matrices_x4(q, b + (col + r) * kBPitch + kk);
      else
        load_matrices_x4_trans(q, b + (kk + r) * kBPitch + col);
      bf[2 * pair][0] = q[0], bf[2 * pair][1] = q[1];
      bf[2 * pair + 1][0] = q[2], bf[2 * pair + 1][1] = q[3];
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj)
        mma_add(DS{}, acc[mi][nj], af[mi], bf[nj][0], bf[nj][1], acc[mi][nj]);
  }
}

}  // namespace strop::detail::mma_tile
