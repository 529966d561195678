// The tensor-core KS kernel for batch-first (ColMajor) 16-bit signals, pipelined: the
// configurations of ks_mma_tile.hpp marked `pipelined` (64 x 64 warp tiles, TJ = 2, 4 or 8
// groups side by side with TJ dividing d).
//
// Why a second kernel: in batch-first memory a signal's features run (l, j) with j fastest,
// so the TJ groups of a tile sit side by side in 4-, 8- or 16-byte units, while mma.m16n8k16
// wants pairs of consecutive l in a register. ks_mma.cu transposes element by element on
// the way from registers to shared memory, with tile geometry decided at run time; profiled,
// it was bound by that index arithmetic (~28 instructions per mma). Here:
// - X and W travel global -> shared by cp.async only (zero-filled outside the problem), two
//   chunks ahead of the products, X in its memory order (units of TJ values, swizzled
//   against bank conflicts);
// - one shared -> shared pass per chunk turns each X unit row into l-contiguous rows per
//   group (16-byte loads, byte permutes pairing l and l + 1, 8-byte stores), so that
//   ldmatrix hands out the B fragments as in the batch-last case;
// - the geometry is fixed at compile time; for short products one block per multiprocessor
//   walks the tiles (persistent), copying the next tile's first chunks while it writes the
//   current tile's outputs (one tile per block otherwise); outputs alpha acc + beta y in
//   fp32, rounded once in pairs, staged through shared memory so that Y is written in
//   units of TJ outputs.
// Requirements (checked by ks_mma_pipelined_apply, which declines otherwise): X and Y with
// unit feature stride, 16-byte aligned, leading dimensions multiples of 8; d % TJ == 0;
// in_group % 8 == 0 (whole 16-byte weight vectors). Any batch and out_group (tails are
// zero-filled on the way in and skipped on the way out).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "operators/ks/ks_device.hpp"
#include "operators/ks/ks_mma_tile.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kChunk = kMmaChunk;
constexpr int kWarpTile = 64;  // outputs and signals of a warp: 4 x 8 m16n8 fragments
static_assert(kChunk == 32, "a thread transposes quads of l: eight per row");

struct PipelinedArgs {
  const uint16_t* x;  // X(feature, n) at n ldx + feature
  Index ldx;
  uint16_t* y;
  Index ldy;
  const uint16_t* w;  // [a][d][out][in] for this op
  Index out_group, in_group, d, batch;
  Index k_tiles, j_tiles;
  Index tiles_per_signal_tile, tiles;  // a j_tiles k_tiles; that times the signal tiles
  float alpha, beta;
};

// Compile-time geometry of a block: TJ groups x BK outputs x BN signals.
template <int TJ, int WK>
struct Geometry {
  static constexpr int WN = kMmaWarps / TJ / WK;  // warps along the signals
  static constexpr int BK = kWarpTile * WK;
  static constexpr int BN = kWarpTile * WN;
  static constexpr int kXStage = BN * kChunk * TJ;  // values: [BN][kChunk][TJ]
  static constexpr int kWStage = TJ * BK * kChunk;  // [TJ][BK][kChunk], swizzled rows
  static constexpr int kXt = TJ * BN * kChunk;      // [TJ][BN][kChunk], swizzled rows
  static constexpr int kPairs = BN / 2;             // staged outputs: [TJ][BK][kPairs] words
  static constexpr int kVectorsPerQuad = TJ / 2;    // four l of one signal
  static_assert(WN >= 1 && TJ * WK * WN == kMmaWarps, "8 warps");
  static_assert(std::size_t(3 * kXStage + 2 * kWStage) * 2 +
                        std::max(std::size_t(2 * kXt), std::size_t(TJ) * BK * BN) * 2 ==
                    ks_mma_pipelined_shared_bytes(TJ, WK),
                "ks_mma_tile.hpp's shared-memory size is this layout's");
};

// Position of 16-byte vector v within an X row: the low bits XOR-ed with the row's eighth,
// so that the eight threads reading one row's quads (one vector each per step) hit eight
// different groups of four banks. With TJ = 2 a row is eight vectors, one per quad: already
// eight different groups, no swizzle.
template <int TJ>
__device__ __forceinline__ int swizzled(int v) {
  return v ^ ((v >> 3) & (TJ / 2 - 1));
}

// Rows of kChunk = 32 values (64 bytes) that ldmatrix reads eight at a time: the 16-byte
// piece `piece` of row `row` sits at piece ^ ((row / 2) % 4), so that eight consecutive rows
// hit eight different groups of four banks (no padding: the stages need the space).
__device__ __forceinline__ int row_piece(int row, int piece) {
  return row * kChunk + (piece ^ ((row >> 1) & 3)) * 8;
}

// Word of the staged outputs holding signals (2 pair, 2 pair + 1) of row jx BK + k: rows of
// BN / 2 words (a multiple of 32), the word XOR-ed with 4 (k % 8), so that a warp's eight k
// times four consecutive pairs hit 32 different banks, both when the products are stored
// and when the output units are read back.
template <int BN>
__device__ __forceinline__ int staged_word(int row, int pair) {
  return row * (BN / 2) + (pair ^ ((row & 7) << 2));
}

// One Y unit: the TJ outputs of a signal and output row, contiguous in memory.
template <int TJ>
__device__ __forceinline__ void store_unit(uint16_t* first, const uint32_t (&words)[TJ / 2]) {
  if constexpr (TJ == 8)
    *reinterpret_cast<uint4*>(first) = make_uint4(words[0], words[1], words[2], words[3]);
  else if constexpr (TJ == 4)
    *reinterpret_cast<uint2*>(first) = make_uint2(words[0], words[1]);
  else
    *reinterpret_cast<uint32_t*>(first) = words[0];
}

// A thread's share of every chunk's copies: X units (n_first + 8 r, l) and W vectors
// (jx, k_first + 64 r, 8 l) for r = 0, 1, ...; only l0 moves from chunk to chunk, so the
// addresses are worked out once (kThreads is a multiple of the units per X row and of the
// vectors per W row).
template <int TJ, int WK>
struct ChunkCopies {
  using G = Geometry<TJ, WK>;
  static constexpr int kXRowsPerPass = kThreads / kChunk;
  static constexpr int kWRowsPerPass = kThreads / (kChunk / 8);
  static_assert(G::BK % kWRowsPerPass == 0, "whole passes over a group's outputs");
  const uint16_t* x;  // unit (n_first, l) of chunk 0
  const uint16_t* w;  // vector (0, k_first, l) of chunk 0
  int x_shared;       // the same in a stage's shared memory
  int w_shared;       // the W vector's row in a stage
  Index n_first, k_first;
  int x_l, w_l;  // the X unit's l, the W vector's first l

  __device__ ChunkCopies(const PipelinedArgs& p, Index i, Index j0, Index k0, Index n0) {
    const int t = int(threadIdx.x);
    n_first = n0 + t / kChunk;
    const int lx = t % kChunk;
    x = p.x + n_first * p.ldx + (i * p.in_group + lx) * p.d + j0;
    x_shared = (t / kChunk) * kChunk * TJ + swizzled<TJ>(lx * TJ / 8) * 8 + (lx * TJ) % 8;
    x_l = lx;
    const int row = t / (kChunk / 8);  // below kWRowsPerPass <= BK: in group jx = 0
    w_l = (t % (kChunk / 8)) * 8;
    k_first = k0 + row;
    w = p.w + ((i * p.d + j0) * p.out_group + k_first) * p.in_group + w_l;
    w_shared = row;
  }

  // Start the copies of chunk c into one stage, as one commit group (empty past the last
  // chunk, so that the groups keep their count).
  __device__ __forceinline__ void issue_x(const PipelinedArgs& p, int c, int chunks,
                                          uint16_t* xs) const {
    if (c < chunks) copy_x(p, Index(c) * kChunk, xs);
    commit_copies();
  }
  __device__ __forceinline__ void issue_w(const PipelinedArgs& p, int c, int chunks,
                                          uint16_t* ws) const {
    if (c < chunks) copy_w(p, Index(c) * kChunk, ws);
    commit_copies();
  }

  __device__ __forceinline__ void copy_x(const PipelinedArgs& p, Index l0, uint16_t* xs) const {
    const bool x_l_inside = l0 + x_l < p.in_group;
    const Index x_pass = kXRowsPerPass * p.ldx;
#pragma unroll
    for (int r = 0; r < G::BN / kXRowsPerPass; ++r) {
      const bool fill = x_l_inside && n_first + r * kXRowsPerPass < p.batch;
      copy_async<TJ * 2>(xs + x_shared + r * kXRowsPerPass * kChunk * TJ,
                         fill ? x + l0 * p.d + r * x_pass : p.x, fill);
    }
  }
  __device__ __forceinline__ void copy_w(const PipelinedArgs& p, Index l0, uint16_t* ws) const {
    const bool w_l_inside = l0 + w_l < p.in_group;
#pragma unroll
    for (int r = 0; r < TJ * G::BK / kWRowsPerPass; ++r) {
      constexpr int kPassesPerGroup = G::BK / kWRowsPerPass;
      const int jx = r / kPassesPerGroup, k_step = (r % kPassesPerGroup) * kWRowsPerPass;
      const bool fill = w_l_inside && k_first + k_step < p.out_group;
      const Index offset = (jx * p.out_group + k_step) * p.in_group + l0;
      copy_async<16>(ws + row_piece(w_shared + jx * G::BK + k_step, w_l / 8),
                     fill ? w + offset : p.w, fill);
    }
  }
};

// X chunk [n][l][jx] (units) -> xt[jx][n][l]: a thread takes four l of one signal, pairs
// l and l + 1 of each group with byte permutes, and stores each group's four values at once.
template <int TJ, int WK>
__device__ __forceinline__ void transpose_chunk(const uint16_t* xs, uint16_t* xt) {
  using G = Geometry<TJ, WK>;
  constexpr int kQuads = G::BN * kChunk / 4;
  constexpr int kWordsPerUnit = TJ / 2;
#pragma unroll
  for (int r = 0; r < kQuads / kThreads; ++r) {
    const int item = int(threadIdx.x) + r * kThreads;
    const int n = item / (kChunk / 4), q = item % (kChunk / 4);
    uint32_t words[4 * kWordsPerUnit];  // unit u (l = 4 q + u): words u TJ/2 ... (jx pairs)
#pragma unroll
    for (int s = 0; s < G::kVectorsPerQuad; ++s) {
      const int v = q * G::kVectorsPerQuad + s;
      const uint4 vector =
          *reinterpret_cast<const uint4*>(xs + n * kChunk * TJ + swizzled<TJ>(v) * 8);
      words[4 * s] = vector.x, words[4 * s + 1] = vector.y;
      words[4 * s + 2] = vector.z, words[4 * s + 3] = vector.w;
    }
#pragma unroll
    for (int jx = 0; jx < TJ; ++jx) {
      const int pair = jx / 2;
      const unsigned select = jx % 2 ? 0x7632u : 0x5410u;  // high or low halves of both
      uint2 out;
      out.x = __byte_perm(words[pair], words[kWordsPerUnit + pair], select);
      out.y = __byte_perm(words[2 * kWordsPerUnit + pair], words[3 * kWordsPerUnit + pair], select);
      *reinterpret_cast<uint2*>(xt + row_piece(jx * G::BN + n, q / 2) + (q % 2) * 4) = out;
    }
  }
}

template <class S, int TJ, int WK, bool Persistent>
__global__ void __launch_bounds__(kThreads, 1) ks_mma_pipelined_kernel(const PipelinedArgs p) {
  using G = Geometry<TJ, WK>;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  auto* xs = reinterpret_cast<uint16_t*>(shared_raw);  // [3][BN][kChunk][TJ], swizzled
  uint16_t* ws = xs + 3 * G::kXStage;                  // [2][TJ][BK][kChunk]
  uint16_t* xt = ws + 2 * G::kWStage;                  // [2][TJ][BN][kChunk]
  // After a tile's products: its 16-bit outputs, pairs of signals per word (staged_word).
  auto* staged = reinterpret_cast<uint32_t*>(xt);

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int wn = warp % G::WN;
  const int wk = (warp / G::WN) % WK;
  const int wj = warp / (G::WN * WK);

  // Tiles: k fastest, then j, i, and the signals. Persistent: one block per multiprocessor
  // walks them, so that while it writes one tile's outputs the first chunks of its next
  // tile are already on their way (short products pay a load latency and an epilogue per
  // tile, with nothing else on the multiprocessor). Otherwise one tile per block.
  const auto tile_origin = [&](Index tile, Index& i, Index& j0, Index& k0, Index& n0) {
    const Index n_tile = tile / p.tiles_per_signal_tile;
    Index rest = tile % p.tiles_per_signal_tile;
    k0 = (rest % p.k_tiles) * G::BK;
    rest /= p.k_tiles;
    j0 = (rest % p.j_tiles) * TJ;
    i = rest / p.j_tiles;
    n0 = n_tile * G::BN;
  };
  const int chunks = int((p.in_group + kChunk - 1) / kChunk);
  // Chunk c of a tile: X in xs[c % 3] until transposed into xt[c % 2], W in ws[c % 2].
  // Commit groups, oldest first: X0 W0 X1 X2 (issued before the tile starts), then
  // W(c + 1) X(c + 3) per iteration (empty past the last chunk).
  const auto issue_first_chunks = [&](const ChunkCopies<TJ, WK>& copies) {
    copies.issue_x(p, 0, chunks, xs);
    copies.issue_w(p, 0, chunks, ws);
    copies.issue_x(p, 1, chunks, xs + G::kXStage);
    copies.issue_x(p, 2, chunks, xs + 2 * G::kXStage);
  };
  Index tile = blockIdx.x;
  Index i, j0, k0, n0;
  tile_origin(tile, i, j0, k0, n0);
  issue_first_chunks(ChunkCopies<TJ, WK>(p, i, j0, k0, n0));
  while (true) {
    const ChunkCopies<TJ, WK> copies(p, i, j0, k0, n0);
    float acc[4][8][4];
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int f = 0; f < 8; ++f)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[m][f][e] = 0.0f;

    wait_copies<2>();  // X0 and W0
    __syncthreads();   // also: the last tile's outputs have left os (= xt)
    transpose_chunk<TJ, WK>(xs, xt);
    // Iteration c multiplies chunk c while transposing chunk c + 1 (no barrier between them,
    // so warps overlap the shared-memory pass with the tensor cores), with X of chunks c + 2
    // and c + 3 in flight and W of chunk c + 1 (W is mostly L2 hits: one chunk ahead is
    // enough, and its third stage went to X): one barrier per chunk.
    for (int c = 0; c < chunks; ++c) {
      wait_copies<1>();  // X(c + 1) and W(c); X(c + 2) may still be in flight
      // Visible to all: xt of chunk c, X(c + 1), W(c); done by all: chunk c - 1's products
      // (its W stage and xt free) and chunk c's transposition (its X stage free).
      __syncthreads();
      copies.issue_w(p, c + 1, chunks, ws + ((c + 1) % 2) * G::kWStage);
      copies.issue_x(p, c + 3, chunks, xs + (c % 3) * G::kXStage);
      if (c + 1 < chunks)
        transpose_chunk<TJ, WK>(xs + ((c + 1) % 3) * G::kXStage, xt + ((c + 1) % 2) * G::kXt);
      const uint16_t* wc = ws + (c % 2) * G::kWStage;
      const uint16_t* xc = xt + (c % 2) * G::kXt;
#pragma unroll
      for (int step = 0; step < kChunk; step += 16) {
        uint32_t a[4][4];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const int row = wj * G::BK + wk * kWarpTile + m * 16 + lane % 16;
          load_matrices_x4(a[m], wc + row_piece(row, step / 8 + lane / 16));
        }
#pragma unroll
        for (int pair = 0; pair < 4; ++pair) {  // two n8 fragments per ldmatrix.x4
          uint32_t b[4];
          const int n = wj * G::BN + wn * kWarpTile + pair * 16 + (lane / 16) * 8 + lane % 8;
          load_matrices_x4(b, xc + row_piece(n, step / 8 + (lane / 8) % 2));
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            mma_add(S{}, acc[m][2 * pair], a[m], b[0], b[1], acc[m][2 * pair]);
            mma_add(S{}, acc[m][2 * pair + 1], a[m], b[2], b[3], acc[m][2 * pair + 1]);
          }
        }
      }
    }
    __syncthreads();  // all products done: every stage is free

    const Index next = Persistent ? tile + gridDim.x : p.tiles;
    Index ni = 0, nj0 = 0, nk0 = 0, nn0 = 0;
    if constexpr (Persistent) {
      if (next < p.tiles) {
        tile_origin(next, ni, nj0, nk0, nn0);
        issue_first_chunks(ChunkCopies<TJ, WK>(p, ni, nj0, nk0, nn0));
      }
    }

    // Outputs alpha acc + beta y, rounded once, staged as pairs of signals (e and e + 1 of a
    // fragment: signals n and n + 1 of output k); y for beta != 0 read value by value, the
    // uncommon case.
    {
      const int g = lane / 4, t = lane % 4;
      const bool add_y = p.beta != 0.0f;
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int f = 0; f < 8; ++f)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int k = wk * kWarpTile + m * 16 + g + h * 8;
            const int n = wn * kWarpTile + f * 8 + 2 * t;
            float first = p.alpha * acc[m][f][2 * h], second = p.alpha * acc[m][f][2 * h + 1];
            if (add_y && k0 + k < p.out_group) {
              const auto* y = reinterpret_cast<const S*>(
                  p.y + (n0 + n) * p.ldy + (i * p.out_group + k0 + k) * p.d + j0 + wj);
              if (n0 + n < p.batch) first += p.beta * load_value(y);
              if (n0 + n + 1 < p.batch) second += p.beta * load_value(y + p.ldy);
            }
            staged[staged_word<G::BN>(wj * G::BK + k, n / 2)] = pack(S{}, first, second);
          }
    }
    __syncthreads();
    // Y units (n, k) and (n + 1, k), the TJ outputs of a signal and output row: a warp takes
    // eight k times four pairs of signals.
#pragma unroll 4
    for (int r = 0; r < G::BK * G::kPairs / kThreads; ++r) {
      const int item = int(threadIdx.x) + r * kThreads;
      const int pair = (item / 8) % G::kPairs;
      const int k = item / (8 * G::kPairs) * 8 + item % 8, n = 2 * pair;
      if (k0 + k >= p.out_group) continue;
      uint32_t words[TJ];
#pragma unroll
      for (int jx = 0; jx < TJ; ++jx)
        words[jx] = staged[staged_word<G::BN>(jx * G::BK + k, pair)];
      uint32_t low[TJ / 2], high[TJ / 2];  // signal n, signal n + 1
#pragma unroll
      for (int q = 0; q < TJ / 2; ++q) {
        low[q] = __byte_perm(words[2 * q], words[2 * q + 1], 0x5410);
        high[q] = __byte_perm(words[2 * q], words[2 * q + 1], 0x7632);
      }
      uint16_t* first = p.y + (n0 + n) * p.ldy + (i * p.out_group + k0 + k) * p.d + j0;
      if (n0 + n < p.batch) store_unit<TJ>(first, low);
      if (n0 + n + 1 < p.batch) store_unit<TJ>(first + p.ldy, high);
    }
    if (next >= p.tiles) break;
    tile = next, i = ni, j0 = nj0, k0 = nk0, n0 = nn0;
  }
}

template <class S, int TJ, int WK>
void launch_pipelined(const PipelinedArgs& args, unsigned blocks, cudaStream_t stream) {
  const bool persistent = Index(blocks) < args.tiles;
  const auto kernel = persistent ? ks_mma_pipelined_kernel<S, TJ, WK, true>
                                 : ks_mma_pipelined_kernel<S, TJ, WK, false>;
  const std::size_t shared = ks_mma_pipelined_shared_bytes(TJ, WK);
  // Above the default 48 KB without the opt-in.
  allow_dynamic_shared_memory(kernel, shared, "ks pipelined mma kernel: shared memory");
  kernel<<<blocks, kThreads, shared, stream>>>(args);
  check_launch("ks_mma_pipelined_kernel");
}

bool aligned16(const void* pointer) {
  return (reinterpret_cast<uintptr_t>(pointer) & 15) == 0;
}

}  // namespace

template <class Storage>
bool ks_mma_pipelined_apply(const KSPattern& p, const Storage* w_op, Op op, ConstView<Storage> X,
                            MatrixView<Storage> Y, float alpha, float beta, const KSMmaTile& tile,
                            Context& ctx) {
  using S = DeviceScalar<Storage>;
  const Index out_group = op != Op::NoTrans ? p.c : p.b;
  const Index in_group = op != Op::NoTrans ? p.b : p.c;
  const bool applicable = tile.pipelined && X.row_stride == 1 && Y.row_stride == 1 &&
                          X.col_stride % 8 == 0 && Y.col_stride % 8 == 0 && aligned16(X.data) &&
                          aligned16(Y.data) && aligned16(w_op) && p.d % tile.tj == 0 &&
                          in_group % 8 == 0;
  if (!applicable) return false;
  PipelinedArgs args{};
  args.x = reinterpret_cast<const uint16_t*>(X.data);
  args.ldx = X.col_stride;
  args.y = reinterpret_cast<uint16_t*>(Y.data);
  args.ldy = Y.col_stride;
  args.w = reinterpret_cast<const uint16_t*>(w_op);
  args.out_group = out_group;
  args.in_group = in_group;
  args.d = p.d;
  args.batch = X.cols;
  args.alpha = alpha;
  args.beta = beta;
  const GroupTileGrid g = group_tile_grid(p, out_group, tile.tk(), tile.tj, X.cols, tile.tn(),
                                          "ks pipelined mma kernel");
  args.k_tiles = g.k_tiles;
  args.j_tiles = g.j_tiles;
  args.tiles_per_signal_tile = Index(g.x);
  args.tiles = Index(g.x) * Index(g.y);
  // Persistent blocks (one per multiprocessor: the kernel holds one at a time) for short
  // products (at most 3 chunks) of at most 64 tiles per multiprocessor; one tile per block
  // otherwise. On an H100 the persistent launch was 5-49 % faster there and 5-33 % slower on
  // long products and on many tiles (bench/NOTES-ks.md).
  const Index sms = std::max(multiprocessors(), 1);  // ctx's device: the current one
  const bool short_products = (in_group + kChunk - 1) / kChunk <= 3;
  const bool too_many_for_a_grid = args.tiles > Index(std::numeric_limits<int>::max());
  const bool persistent = (short_products && args.tiles <= 64 * sms) || too_many_for_a_grid;
  const auto blocks = unsigned(persistent ? std::min(args.tiles, sms) : args.tiles);
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  if (tile.tj == 8)
    launch_pipelined<S, 8, 1>(args, blocks, stream);
  else if (tile.tj == 2)
    launch_pipelined<S, 2, 2>(args, blocks, stream);
  else if (tile.warps_k == 2)
    launch_pipelined<S, 4, 2>(args, blocks, stream);
  else
    launch_pipelined<S, 4, 1>(args, blocks, stream);
  return true;
}

template bool ks_mma_pipelined_apply(const KSPattern&, const half*, Op, ConstView<half>,
                                     MatrixView<half>, float, float, const KSMmaTile&, Context&);
template bool ks_mma_pipelined_apply(const KSPattern&, const bfloat16*, Op, ConstView<bfloat16>,
                                     MatrixView<bfloat16>, float, float, const KSMmaTile&,
                                     Context&);

}  // namespace strop::detail
