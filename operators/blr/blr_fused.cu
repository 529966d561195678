// The one-launch tensor-core plan kernel (blr_fused.hpp): all GEMM steps of a BLR plan in one
// cooperative launch, a grid-wide barrier between steps, the intermediates through L2.
//
// A step is C_e = op(A_e) op(B_e) over a batch of entries, all operands column-major. The
// blocks take its 64 x 64 tiles of C in turn. A tile walks k in chunks of 32, four chunks in
// flight: the 128 threads copy both operands' chunks to shared memory with cp.async (16-byte
// pieces; single values at unaligned edges, zeros past them), the operand's contiguous
// dimension last, and the four warps (32 x 32 each) read m16n8k16 fragments with ldmatrix,
// transposing on the way where that dimension is m or n rather than k. The fp32 sums go
// through shared memory so that C's columns are written in 16-byte pieces, with alpha and
// beta for Y. Where a step has fewer tiles than resident blocks, k is split into parts: each
// part's sums go to an fp32 workspace, and the block that completes a tile last (a counter
// per tile, reset by that block) adds them and writes C. Steps with n, k <= 16 (BLAST's
// couplings) run on CUDA cores instead: one thread per row of C keeps its k values of op(A)
// in registers.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "operators/blr/blr_batch_entry.cuh"
#include "operators/blr/blr_fused_kernel.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"
#include "strop/core/buffer.hpp"
#include "strop/core/error.hpp"

namespace strop::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kTile = 64;   // rows and columns of a C tile
constexpr int kDepth = 32;  // k per chunk
constexpr int kStages = 4;  // chunks in flight
constexpr int kWarps = 4;   // 2 x 2 warps of 32 x 32
constexpr int kThreads = kWarps * 32;
constexpr int kPad = 8;  // 16 bytes per shared row: ldmatrix's 8 rows fall in distinct banks
// One operand chunk in shared memory: [kTile][kDepth + kPad] (k contiguous) or
// [kDepth][kTile + kPad] (m or n contiguous).
constexpr int kChunkValues = std::max(kTile * (kDepth + kPad), kDepth*(kTile + kPad));
constexpr int kSumPitch = kTile + 4;  // fp32 sums staged as [column][row]
constexpr int kSharedBytes = kStages * 2 * kChunkValues * 2;
static_assert(kTile * kSumPitch * 4 <= kSharedBytes, "the sums fit in the operand buffers");
static_assert(kTile * kDepth / 8 == 2 * kThreads, "two 16-byte pieces per thread and chunk");
// A split part has at least this many chunks, and a tile at most this many parts (the last
// block reads them all).
constexpr int kMinChunksPerSplit = 4;
constexpr int kMaxSplits = 16;

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

// C value = alpha sum + beta C (Y) or the sum (an intermediate); beta = 0 never reads C.
template <class DS>
__device__ __forceinline__ float output_value(const FusedArgs& a, bool to_y, float sum,
                                              const DS* c) {
  if (!to_y) return sum;
  return a.beta == 0.0f ? a.alpha * sum : a.alpha * sum + a.beta * load_value(c);
}

// Writes 8 consecutive rows of C from their fp32 sums (alpha and beta for Y): one 16-byte
// store where C allows, value by value at its edge.
template <class DS>
__device__ __forceinline__ void write_rows(const FusedArgs& a, const FusedStep& st, DS* c, int i,
                                           const float (&sum)[8]) {
  const bool to_y = st.to_y;
  if (st.c.vector && i + 8 <= st.m) {
    uint4 old = make_uint4(0, 0, 0, 0);
    if (to_y && a.beta != 0.0f) old = *reinterpret_cast<const uint4*>(c);
    const uint32_t* old_words = reinterpret_cast<const uint32_t*>(&old);
    uint32_t words[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      float lo = sum[2 * w], hi = sum[2 * w + 1];
      if (to_y) {
        const float2 y = unpack(DS{}, old_words[w]);
        lo = a.alpha * lo + (a.beta == 0.0f ? 0.0f : a.beta * y.x);
        hi = a.alpha * hi + (a.beta == 0.0f ? 0.0f : a.beta * y.y);
      }
      words[w] = pack(DS{}, lo, hi);
    }
    *reinterpret_cast<uint4*>(c) = make_uint4(words[0], words[1], words[2], words[3]);
  } else {
    for (int v = 0; v < 8 && i + v < st.m; ++v)
      store_value(c + v, output_value(a, to_y, sum[v], c + v));
  }
}

template <class DS, bool AK, bool BK>
__device__ void run_tile(const FusedArgs& a, const FusedStep& st, int unit, uint16_t* shared) {
  __shared__ int finishes_tile;
  // 32-bit index arithmetic throughout (the launch checks that it fits).
  const int tile = unit / st.splits;
  const int split = unit - tile * st.splits;
  const int per_entry = st.m_tiles * st.n_tiles;
  const int e = tile / per_entry;
  const int rest = tile - e * per_entry;
  const int j_tile = rest / st.m_tiles;
  const int i0 = (rest - j_tile * st.m_tiles) * kTile, j0 = j_tile * kTile;
  const void* a_entry = static_cast<const DS*>(a.arrays[st.a.array]) + entry_offset(st.a, e);
  const void* b_entry = static_cast<const DS*>(a.arrays[st.b.array]) + entry_offset(st.b, e);
  DS* c_entry = static_cast<DS*>(a.arrays[st.c.array]) + entry_offset(st.c, e);
  // This part's chunks of k.
  const int chunks = (st.k + kDepth - 1) / kDepth;
  const int first = split * chunks / st.splits;
  const int count = (split + 1) * chunks / st.splits - first;
  // op(A)(i, kk) = A(kk, i) is k-contiguous (AK = trans_a); op(B)(kk, j) = B(kk, j) is (BK).
  const OperandPieces<AK> pa(a_entry, st.a.ld, st.k, st.m, i0, first * kDepth, st.a.vector);
  const OperandPieces<BK> pb(b_entry, st.b.ld, st.k, st.n, j0, first * kDepth, st.b.vector);
  auto a_buf = [&](int c) { return shared + (c % kStages) * 2 * kChunkValues; };
  auto b_buf = [&](int c) { return a_buf(c) + kChunkValues; };
  auto copy = [&](int c) {
    pa.copy(a_buf(c), c);
    pb.copy(b_buf(c), c);
  };

  const int warp = int(threadIdx.x) / 32;
  const int wm = (warp % 2) * 32, wn = (warp / 2) * 32;
  float acc[2][4][4] = {};
#pragma unroll
  for (int c = 0; c < kStages - 1; ++c) {
    if (c < count) copy(c);
    commit_copies();
  }
  for (int c = 0; c < count; ++c) {
    wait_copies<kStages - 2>();  // chunk c is in (this thread's pieces)
    __syncthreads();             // everyone's pieces; chunk c - 1's buffer is free
    if (c + kStages - 1 < count) copy(c + kStages - 1);
    commit_copies();
    multiply_chunk<DS, AK, BK>(acc, a_buf(c), b_buf(c), wm, wn);
  }
  wait_copies<0>();
  __syncthreads();  // the buffers now hold the sums

  // The sums as [column][row] fp32 (lane 4 g + t holds rows g, g + 8 and columns 2 t, 2 t + 1
  // of each m16n8 block).
  float* sums = reinterpret_cast<float*>(shared);
  const int lane = int(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        sums[(wn + 8 * nj + 2 * t + q % 2) * kSumPitch + wm + 16 * mi + g + (q / 2) * 8] =
            acc[mi][nj][q];
  __syncthreads();

  // A split tile: this part's sums to the workspace; the block that completes the tile adds
  // all parts (read from L2: other blocks wrote them).
  float* parts = a.partials + (long long)tile * st.splits * (kTile * kTile);
  if (st.splits > 1) {
    float* mine = parts + split * (kTile * kTile);
    for (int index = int(threadIdx.x); index < kTile * kTile / 4; index += kThreads) {
      const int col = index / (kTile / 4), row = (index % (kTile / 4)) * 4;
      *reinterpret_cast<float4*>(mine + col * kTile + row) =
          *reinterpret_cast<const float4*>(sums + col * kSumPitch + row);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      finishes_tile = atomicAdd(a.counters + tile, 1) == st.splits - 1;
      if (finishes_tile) a.counters[tile] = 0;  // left zeroed for the next step and call
    }
    __syncthreads();
    if (!finishes_tile) return;
    __threadfence();
  }
  // C's columns in pieces of 8 rows.
  for (int index = int(threadIdx.x); index < kTile * kTile / 8; index += kThreads) {
    const int col = index / (kTile / 8), row = (index % (kTile / 8)) * 8;
    const int i = i0 + row, j = j0 + col;
    if (i >= st.m || j >= st.n) continue;
    float sum[8];
    if (st.splits == 1) {
#pragma unroll
      for (int v = 0; v < 8; ++v)
        sum[v] = sums[col * kSumPitch + row + v];
    } else {
#pragma unroll
      for (int v = 0; v < 8; ++v)
        sum[v] = 0.0f;
      for (int part = 0; part < st.splits; ++part) {
        const float4* p =
            reinterpret_cast<const float4*>(parts + part * (kTile * kTile) + col * kTile + row);
        const float4 lo = __ldcg(p), hi = __ldcg(p + 1);
        sum[0] += lo.x, sum[1] += lo.y, sum[2] += lo.z, sum[3] += lo.w;
        sum[4] += hi.x, sum[5] += hi.y, sum[6] += hi.z, sum[7] += hi.w;
      }
    }
    write_rows(a, st, c_entry + i + j * st.c.ld, i, sum);
  }
  __syncthreads();  // the buffers are the next tile's
}

// n, k <= kFusedSmallInner: thread per row i of C_e, its k values of op(A) in registers.
template <class DS>
__device__ void run_small(const FusedArgs& a, const FusedStep& st) {
  const int rows = int(st.batch) * st.m;
  for (int index = int(blockIdx.x) * kThreads + int(threadIdx.x); index < rows;
       index += int(gridDim.x) * kThreads) {
    const int e = index / st.m;
    const int i = index - e * st.m;
    const DS* A = static_cast<const DS*>(a.arrays[st.a.array]) + entry_offset(st.a, e);
    const DS* B = static_cast<const DS*>(a.arrays[st.b.array]) + entry_offset(st.b, e);
    DS* C = static_cast<DS*>(a.arrays[st.c.array]) + entry_offset(st.c, e);
    float row[kFusedSmallInner];
#pragma unroll
    for (int kk = 0; kk < kFusedSmallInner; ++kk)
      row[kk] =
          kk < st.k ? load_value(A + (st.trans_a ? kk + i * st.a.ld : i + kk * st.a.ld)) : 0.0f;
    for (int j = 0; j < st.n; ++j) {
      float sum = 0.0f;
#pragma unroll
      for (int kk = 0; kk < kFusedSmallInner; ++kk)
        if (kk < st.k)
          sum = fmaf(row[kk], load_value(B + (st.trans_b ? j + kk * st.b.ld : kk + j * st.b.ld)),
                     sum);
      DS* c = C + i + j * st.c.ld;
      store_value(c, output_value(a, st.to_y, sum, c));
    }
  }
}

template <class DS>
__global__ void __launch_bounds__(kThreads) blr_fused_kernel(const __grid_constant__ FusedArgs a) {
  __shared__ alignas(16) uint16_t shared[kSharedBytes / 2];
  for (int s = 0; s < a.count; ++s) {
    const FusedStep& st = a.steps[s];
    if (st.small) {
      run_small<DS>(a, st);
    } else {
      // The operands' layouts as template parameters (a choice per step, uniform).
      auto tiles = [&](auto a_k, auto b_k) {
        for (int unit = int(blockIdx.x); unit < int(st.units); unit += int(gridDim.x))
          run_tile<DS, decltype(a_k)::value, decltype(b_k)::value>(a, st, unit, shared);
      };
      using Yes = std::true_type;
      using No = std::false_type;
      if (st.trans_a)
        st.trans_b ? tiles(Yes{}, No{}) : tiles(Yes{}, Yes{});
      else
        st.trans_b ? tiles(No{}, No{}) : tiles(No{}, Yes{});
    }
    if (s + 1 < a.count) cg::this_grid().sync();  // the next step reads what this one wrote
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

template <class DS>
void launch(FusedArgs& a, Context& ctx) {
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto kernel = blr_fused_kernel<DS>;
  const long long resident =
      resident_blocks<blr_fused_kernel<DS>>(kThreads);  // grid.sync: co-resident

  // Split tiles need the counters, which a graph being captured cannot create.
  a.counters = static_cast<int*>(
      ctx.persistent_workspace("blr_fused counters", sizeof(int) * kFusedCounters));
  long long most_units = 1, partial_values = 0;
  for (int s = 0; s < a.count; ++s) {
    FusedStep& st = a.steps[s];
    st.small = st.n <= kFusedSmallInner && st.k <= kFusedSmallInner;
    st.m_tiles = (st.m + kTile - 1) / kTile;
    st.n_tiles = (st.n + kTile - 1) / kTile;
    const long long tiles = st.batch * st.m_tiles * st.n_tiles;
    const long long chunks = (st.k + kDepth - 1) / kDepth;
    st.splits = 1;
    if (!st.small && a.counters != nullptr && tiles <= kFusedCounters)
      st.splits = int(std::clamp<long long>(std::min(resident / tiles, chunks / kMinChunksPerSplit),
                                            1, kMaxSplits));
    if (st.splits > 1) partial_values = std::max(partial_values, tiles * st.splits * kTile * kTile);
    st.units = st.small ? (st.batch * st.m + kThreads - 1) / kThreads : tiles * st.splits;
    // The kernel's index arithmetic is 32-bit: tiles x parts, rows of the small form.
    if (tiles * st.splits > INT_MAX || st.batch * st.m > INT_MAX)
      throw ShapeError("blr fused kernel: a step of " + std::to_string(st.batch) + " products of " +
                       std::to_string(st.m) + " x " + std::to_string(st.n) +
                       " exceeds its 32-bit tile and row numbers");
    most_units = std::max(most_units, st.units);
  }
  // One allocation: Z1, Z2 (Storage), then the parts' fp32 sums at a 16-byte boundary.
  const long long z_floats = ((a.z1_size + a.z2_size) * 2 + 15) / 16 * 4;
  Buffer<float> workspace(z_floats + partial_values, MemorySpace::Device, ctx);
  a.arrays[kFusedZ1] = workspace.data();
  a.arrays[kFusedZ2] = static_cast<DS*>(a.arrays[kFusedZ1]) + a.z1_size;
  a.partials = workspace.data() + z_floats;
  for (int s = 0; s < a.count; ++s) {
    FusedStep& st = a.steps[s];
    for (FusedOperand* o : {&st.a, &st.b, &st.c})
      o->vector = aligned16(a.arrays[o->array]) && o->offset % 8 == 0 && o->ld % 8 == 0 &&
                  o->stride % 8 == 0;
  }
  const int blocks = int(std::min(most_units, resident));
  void* params[] = {&a};
  check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                         dim3(kThreads), params, 0, stream),
             "blr fused kernel (cooperative launch)");
}

}  // namespace

template <class Storage>
void launch_blr_fused(FusedArgs& a, Context& ctx) {
  launch<DeviceScalar<Storage>>(a, ctx);
}
template void launch_blr_fused<half>(FusedArgs&, Context&);
template void launch_blr_fused<bfloat16>(FusedArgs&, Context&);

}  // namespace strop::detail
