// Two 32 x 32 factors in one pass over half/bfloat16 batch-first data, on tensor cores.
//
// Without it the 16-bit path runs one cuBLAS GEMM pass per 32 x 32 factor (a 1024 x 1024
// merged block would cost 32x the flops), and those passes are bound by memory: 32^4 took
// four passes, each near the copy rate. This kernel does the pair in one.
//
// A chunk of 1024 contiguous features of one signal is a 32 x 32 matrix C[p1][p0]. The two
// sliced multiplies (G_hi on p0 first, then G_lo on p1) give G_lo C G_hi^T, whose element
// (q1, q0) is output J = q1 * 32 + q0 of the chunk and goes to row J * chunks + L for chunk
// L (FastKron's rotation). One warp computes one chunk in two rounds of mma.sync m16n8k16:
//   round 1  D1 = G_hi C^T (32 x 32, rows q0, columns p1): A = G_hi from registers, B = C^T
//            read by ldmatrix from the chunk's rows (p0 contiguous, as B's columns want);
//   round 2  D2 = D1 G_lo^T (rows q0, columns q1): A is D1's accumulators rounded to 16 bits
//            (an accumulator pair is an A-fragment pair), B = G_lo^T from registers.
// So the intermediate never leaves registers, rounded once to 16 bits like the GEMM path's.
//
// A CTA takes tiles of kTileChunks consecutive chunks of one signal (two buffers: the next
// tile's cp.async copies run under this one's work), writes each warp's D2 into a staging
// tile [J][L], then stores each output row's kTileChunks values as 16-byte pieces (a 64-byte
// run per row and tile). With 32-byte runs (16 chunks, two CTAs per SM) the kernel was bound
// by L2 requests (ncu, session 23: L2 83 %, DRAM 28 %): each warp store touched one sector
// of 16 lines; with 64-byte runs still (L2 97 %, DRAM 42 %). So, where a signal has an even
// number of tiles, the two CTAs of a cluster take neighbouring tiles (a unit) and each
// stores half of the rows as whole 128-byte lines, half of each line read from the partner's
// staging (distributed shared memory). One CTA of 16 warps per SM (the shared memory of
// 32-chunk tiles).
//
// Bank conflicts: a chunk row is 64 bytes, so the 16-byte units of lines (two rows, 128
// bytes) are XOR-swizzled by the line index (an ldmatrix of 8 rows then reads 8 distinct
// units); a staging row is 16 words, swizzled by bits of J so that the 32 lanes of one
// fragment register (J = 64 t + g + const) write 32 distinct banks, and the four words of a
// 16-byte piece stay one aligned (permuted) group: one 16-byte read each.
#include <algorithm>

#include "operators/kron/kron_fused16_device.cuh"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cluster_device.cuh"
#include "runtime/cluster_launch.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kP = int(kKronPair16Dim);            // 32
constexpr int kChunk = kP * kP;                    // 1024 features
constexpr int kTileChunks = int(kKronPair16Tile);  // chunks per tile (a 64-byte run per row)
constexpr int kTile = kTileChunks * kChunk;        // elements of a tile
constexpr int kWarps = 16;
constexpr int kThreads = 32 * kWarps;
static_assert(kTileChunks == 32, "the staging swizzle assumes 32 chunks (16 words) per row");

template <class S>
using Pair16Args = kron_device::Fused16Args<S, 2>;  // g[0] = G_hi (applied first), g[1] = G_lo

// Element (p1, p0) of a chunk in shared memory: 16-byte unit u = (p1 % 2) * 4 + p0 / 8 of
// line p1 / 2, stored at unit u ^ (line % 8).
__device__ __forceinline__ int chunk_offset(int line, int unit) {
  return line * 64 + ((unit ^ (line & 7)) << 3);
}

// Word w (chunks 2w, 2w + 1) of staging row J is at w ^ staging_swizzle(J) in the row: the
// lanes of a fragment register that share J % 2 differ in (J / 2) % 4 or J / 64 % 4.
__device__ __forceinline__ int staging_swizzle(int J) {
  return ((J >> 1) & 3) | (((J >> 6) & 3) << 2);
}
__device__ __forceinline__ int staging_word(int J, int w) {
  return J * (kTileChunks / 2) + (w ^ staging_swizzle(J));
}

// This CTA's tile of unit u: tile lt of signal b (LogCluster 1: a cluster of two CTAs takes a
// unit of two tiles).
template <class S, int LogCluster>
__device__ __forceinline__ void load_tile(S* xs, long long u, int rank, const Pair16Args<S>& a) {
  kron_device::load_fused16_tile<kChunk, kTileChunks, kThreads, LogCluster>(
      xs, u, rank, a, [](int w) { return chunk_offset(w / 8, w % 8); });
}

// The factor G_f[q][p] as a 16-bit pair (p, p + 1) of row q.
template <class S>
__device__ __forceinline__ uint32_t factor_pair(const Pair16Args<S>& a, int f, int q, int p) {
  return kron_device::factor_pair<S>(a.g[f], a.sq[f], a.sp[f], q, p);
}

// One chunk: round 1 and round 2 on the tensor cores, results into the staging tile.
template <class S>
__device__ __forceinline__ void pair_chunk(const S* chunk, S* staging, int L,
                                           const uint32_t (&g_hi)[2][2][4],
                                           const uint32_t (&g_lo)[4][2][2]) {
  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  float d1[2][4][4];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) {
    // Matrix j of the ldmatrix: rows p1 = 8 nt .. 8 nt + 7, columns p0 = 8 j .. 8 j + 7.
    const int p1 = 8 * nt + (lane & 7), j = lane >> 3;
    uint32_t b[4];
    load_matrices_x4(b, chunk + chunk_offset(p1 >> 1, ((p1 & 1) << 2) | j));
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
      mma(S{}, d1[mt][nt], g_hi[mt][0], b[0], b[1]);
      mma_add(S{}, d1[mt][nt], g_hi[mt][1], b[2], b[3], d1[mt][nt]);
    }
  }
  auto* words = reinterpret_cast<uint16_t*>(staging);
#pragma unroll
  for (int mt = 0; mt < 2; ++mt) {
    float d2[4][4] = {};
#pragma unroll
    for (int ks = 0; ks < 2; ++ks) {
      const uint32_t a[4] = {
          pack(S{}, d1[mt][2 * ks][0], d1[mt][2 * ks][1]),
          pack(S{}, d1[mt][2 * ks][2], d1[mt][2 * ks][3]),
          pack(S{}, d1[mt][2 * ks + 1][0], d1[mt][2 * ks + 1][1]),
          pack(S{}, d1[mt][2 * ks + 1][2], d1[mt][2 * ks + 1][3]),
      };
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
        mma_add(S{}, d2[nt], a, g_lo[nt][ks][0], g_lo[nt][ks][1], d2[nt]);
    }
    // d2[nt][i]: q0 = 16 mt + g (+ 8 for i >= 2), q1 = 8 nt + 2 t (+ 1 for odd i).
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int i = 0; i < 4; i += 2) {
        const uint32_t pair = pack(S{}, d2[nt][i], d2[nt][i + 1]);
        const int q0 = 16 * mt + g + (i >= 2 ? 8 : 0), q1 = 8 * nt + 2 * t;
        const int J0 = q1 * kP + q0, J1 = J0 + kP;
        words[2 * staging_word(J0, L >> 1) + (L & 1)] = uint16_t(pair & 0xffff);
        words[2 * staging_word(J1, L >> 1) + (L & 1)] = uint16_t(pair >> 16);
      }
  }
}

// Row J of the output gets the unit's kTileChunks << LogCluster values: four 16-byte pieces per
// row and tile. Clustered, this CTA stores rows [rank 512, rank 512 + 512), pieces 4 h ..
// 4 h + 3 of a row from the staging of CTA h.
template <class S, int LogCluster>
__device__ __forceinline__ void store_unit(const S* staging, long long u, int rank,
                                           const Pair16Args<S>& a) {
  const long long b = u / a.units_per_signal, lu = u % a.units_per_signal;
  S* yb = a.y + b * a.y_bs + (lu << LogCluster) * kTileChunks;
  constexpr int per_tile = kTileChunks / 8;        // pieces of a row per tile
  constexpr int per_row = per_tile << LogCluster;  // pieces of a row per unit
  constexpr int rows = kChunk >> LogCluster;       // rows this CTA stores
  static_assert(kThreads % per_row == 0, "a thread keeps its piece of the row");
  // A thread's piece h * per_tile + piece of its rows is the same for all of them.
  const int h = (int(threadIdx.x) % per_row) / per_tile, piece = int(threadIdx.x) % per_tile;
  const S* source = staging;
  if constexpr (LogCluster > 0) source = cluster_shared(staging, h);
  const auto* groups = reinterpret_cast<const uint4*>(source);
  S* yb_piece = yb + 8 * (h * per_tile + piece);
#pragma unroll 4
  for (int J = rank * rows + int(threadIdx.x) / per_row; J < (rank + 1) * rows;
       J += kThreads / per_row) {
    // The piece's words 4 piece + k sit at (4 piece + k) ^ swizzle: group piece ^ (swizzle
    // / 4), word k ^ (swizzle % 4) in it.
    const int swizzle = staging_swizzle(J);
    uint4 v = groups[J * per_tile + (piece ^ (swizzle >> 2))];
    if (swizzle & 1) v = uint4{v.y, v.x, v.w, v.z};
    if (swizzle & 2) v = uint4{v.z, v.w, v.x, v.y};
    auto* yp = reinterpret_cast<uint4*>(yb_piece + J * a.chunks);
    if (a.scale) kron_device::scale_piece<S>(v, yp, a.alpha, a.beta, a.beta_zero);
    *yp = v;
  }
}

template <class S, int LogCluster>
__global__ void __launch_bounds__(kThreads, 1) kron_pair16_kernel(const Pair16Args<S> a) {
  extern __shared__ __align__(128) unsigned char shared_raw[];
  S* buffers = reinterpret_cast<S*>(shared_raw);  // two input tiles
  S* staging = buffers + 2 * kTile;               // [J][L], swizzled words
  const int rank = LogCluster ? cluster_block_rank() : 0;
  // The factors as fragments, read once: G_hi as A (rows q0, columns p0) per 16 x 16 block
  // [mt][ks]; G_lo^T as B (rows p1, columns q1) per 16 x 8 block [nt][ks].
  uint32_t g_hi[2][2][4], g_lo[4][2][2];
  auto setup = [&] {
    const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int ks = 0; ks < 2; ++ks)
        kron_device::factor_a_fragment<S>(g_hi[mt][ks], a.g[0], a.sq[0], a.sp[0], 16 * mt, 16 * ks);
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int ks = 0; ks < 2; ++ks) {
        const int q = 8 * nt + g, p = 16 * ks + 2 * t;
        g_lo[nt][ks][0] = factor_pair(a, 1, q, p);
        g_lo[nt][ks][1] = factor_pair(a, 1, q, p + 8);
      }
  };
  const int warp = int(threadIdx.x) >> 5;
  kron_device::run_fused16_units<LogCluster>(
      buffers, kTile, a,
      [&](S* buffer, long long unit) { load_tile<S, LogCluster>(buffer, unit, rank, a); }, setup,
      [&](S* xs) {
#pragma unroll 1
        for (int L = warp; L < kTileChunks; L += kWarps)
          pair_chunk(xs + L * kChunk, staging, L, g_hi, g_lo);
      },
      [&](long long unit) { store_unit<S, LogCluster>(staging, unit, rank, a); });
}

}  // namespace

template <ReducedPrecision Storage>
void kron_fused_pair16(std::span<const KronFactorRef<float>> pair, ConstView<Storage> in,
                       MatrixView<Storage> out, float alpha, float beta, bool scale, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<ShapeError>(pair.size() == 2, "kron_fused_pair16: ", pair.size(), " factors, not two");
  const KronShape shapes[2] = {{pair[0].P, pair[0].Q}, {pair[1].P, pair[1].Q}};
  require<ShapeError>(
      kron_pair16_fits(shapes, in.rows) && in.rows == out.rows && in.cols == out.cols,
      "kron_fused_pair16: not two 32 x 32 factors on a multiple of ", kKronPair16TileFeatures,
      " features");
  require<ShapeError>(kron_pair16_aligned(in) && kron_pair16_aligned(out),
                      "kron_fused_pair16: views must be packed batch-first and 16-byte aligned");
  const int log_cluster = kron_pair16_clustered(in.rows) && device_has_clusters() ? 1 : 0;
  const auto a = kron_device::make_fused16_args<S, 2>(pair, in, out, alpha, beta, scale, kChunk,
                                                      kTileChunks, log_cluster);
  if (a.units == 0) return;

  const std::size_t shared = kKronPair16SharedBytes;
  static_assert(kKronPair16SharedBytes == sizeof(S) * 3 * kTile);
  auto run = [&](auto kernel) {
    launch_persistent_clusters(kernel, a, 1 << log_cluster, kThreads, shared, a.units,
                               static_cast<cudaStream_t>(ctx.stream()), "kron_pair16_kernel");
  };
  if (log_cluster)
    run(kron_pair16_kernel<S, 1>);
  else
    run(kron_pair16_kernel<S, 0>);
}

template void kron_fused_pair16(std::span<const KronFactorRef<float>>, ConstView<half>,
                                MatrixView<half>, float, float, bool, Context&);
template void kron_fused_pair16(std::span<const KronFactorRef<float>>, ConstView<bfloat16>,
                                MatrixView<bfloat16>, float, float, bool, Context&);

}  // namespace strop::detail
