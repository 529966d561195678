// Three 16 x 16 factors in one pass over half/bfloat16 batch-first data, on tensor cores.
//
// Without it the 16-bit path runs 16^5 as three GEMM passes (two on merged 256 x 256 blocks,
// one on a 16 x 16 factor), each bound by memory; a merged 4096 x 4096 block would cost 16x
// the flops of the passes. This kernel applies three factors in one pass, so 16^5 takes two.
//
// A chunk of 4096 contiguous features of one signal is C[p2][p1][p0]. The three sliced
// multiplies give Y[q2][q1][q0] = sum G2[q2][p2] G1[q1][p1] G0[q0][p0] C[p2][p1][p0], whose
// element J = q2 * 256 + q1 * 16 + q0 goes to row J * chunks + L for chunk L (FastKron's
// rotation). One warp computes one chunk with mma.sync m16n8k16 (K = 16: one k-step):
//   for each p2   round 1  D1 = G0 C[p2]^T (rows q0, columns p1): B read by ldmatrix from the
//                          chunk's rows (p0 contiguous, as B's columns want);
//                 round 2  D2 = G1 D1^T (rows q1, columns q0): D1's accumulators rounded to
//                          16 bits are B fragments as they stand;
//                 D2 goes to T[p2][q1 * 16 + q0] in the chunk's own shared memory (C[p2] has
//                 been read: the ldmatrix results feed the stores through the products);
//   round 3       E = G2 T (rows q2, columns n = q1 * 16 + q0): the axis p2, spread over the
//                 loop above, is read back as B's k by ldmatrix.trans, and E[q2][n] (output J
//                 = q2 * 256 + n) overwrites T where its columns were just read.
// So each intermediate is rounded once to 16 bits, like the GEMM path's passes.
//
// A CTA of 8 warps takes tiles of 8 consecutive chunks of one signal (two tile buffers: the
// next tile's cp.async copies run under this one's work). After the rounds it gathers each
// output row's 8 values (one per chunk) into a 16-byte staging row. Rows of 16 bytes would
// make every store a half sector (the pair kernel was bound by L2 requests with 32-byte runs,
// kron_fused_pair16.cu), so a cluster of 2^LogCluster CTAs takes neighbouring tiles (a unit)
// and each CTA stores a slice of the rows as runs of 16 << LogCluster bytes, the pieces read
// from the partners' staging (distributed shared memory).
//
// Bank conflicts: the chunk's 16-byte units are XOR-swizzled within each 128-byte line (see
// input_unit and mixed_unit), so that every ldmatrix phase reads 8 distinct units and every
// 32-bit store of a warp hits 32 banks.
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

constexpr int kD = int(kKronTriple16Dim);            // 16
constexpr int kChunk = kD * kD * kD;                 // 4096 features
constexpr int kTileChunks = int(kKronTriple16Tile);  // chunks per tile: a 16-byte row piece
constexpr int kTile = kTileChunks * kChunk;          // elements of a tile
constexpr int kWarps = kTileChunks;                  // one chunk per warp
constexpr int kThreads = 32 * kWarps;
static_assert(kTileChunks == 8, "a staging row is one 16-byte piece of 8 chunks");

template <class S>
using Triple16Args = kron_device::Fused16Args<S, 3>;  // g[0] = G0 (on p0), G1, G2

// The input chunk's 16-byte unit u = (p2 * 16 + p1) * 2 + p0 / 8, stored at position
// (u % 8) ^ (line % 2) of its line u / 8: the 8 rows p1 .. p1 + 7 of one ldmatrix matrix span
// two lines, at 4 positions each, and the swizzle gives the second line the other 4.
__device__ __forceinline__ int input_unit(int u) {
  return (u & ~7) | ((u & 7) ^ ((u >> 3) & 1));
}

// T[r][n] and E[r][n] (r = p2 or q2, n = q1 * 16 + q0): unit c = n / 8 of row r (512 bytes,
// the rows of C[p2]) at position (c % 8) ^ (r % 8) ^ (c / 8 % 2) of its line. An ldmatrix of
// rows r .. r + 7 at one c reads 8 positions; the warp's 32-bit stores (r = g or g + 8, c = 2
// g + const in round 2, c fixed in round 3) cover all 8 positions of a line's 4 words.
__device__ __forceinline__ int mixed_unit(int r, int c) {
  return r * 32 + (c & ~7) + ((c & 7) ^ (r & 7) ^ ((c >> 3) & 1));
}

// This CTA's tile of unit u: tile lt of signal b (a cluster takes 2^LogCluster neighbouring
// tiles).
template <class S, int LogCluster>
__device__ __forceinline__ void load_tile(S* xs, long long u, int rank, const Triple16Args<S>& a) {
  kron_device::load_fused16_tile<kChunk, kTileChunks, kThreads, LogCluster>(
      xs, u, rank, a, [](int w) { return 8 * input_unit(w); });
}

// One chunk, in place: the three rounds on the tensor cores; E left in the chunk's memory.
template <class S>
__device__ __forceinline__ void triple_chunk(S* chunk, const uint32_t (&g0)[4],
                                             const uint32_t (&g1)[4], const uint32_t (&g2)[4]) {
  const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  const int m = lane >> 3, r = lane & 7;  // this lane's ldmatrix matrix and row
  auto* words = reinterpret_cast<uint32_t*>(chunk);
#pragma unroll 2
  for (int p2 = 0; p2 < kD; ++p2) {
    // Matrix m: rows p1 = 8 (m / 2) .. + 7, columns p0 = 8 (m % 2) .. + 7.
    uint32_t b[4];
    load_matrices_x4(b, chunk + 8 * input_unit((p2 * kD + 8 * (m >> 1) + r) * 2 + (m & 1)));
    float d1[2][4];  // [p1 / 8]: rows q0 = g (+ 8 for i >= 2), columns p1 = 2 t (+ 1)
    mma(S{}, d1[0], g0, b[0], b[1]);
    mma(S{}, d1[1], g0, b[2], b[3]);
    float d2[2][4];  // [q0 / 8]: rows q1 = g (+ 8 for i >= 2), columns q0 = 2 t (+ 1)
    mma(S{}, d2[0], g1, pack(S{}, d1[0][0], d1[0][1]), pack(S{}, d1[1][0], d1[1][1]));
    mma(S{}, d2[1], g1, pack(S{}, d1[0][2], d1[0][3]), pack(S{}, d1[1][2], d1[1][3]));
#pragma unroll
    for (int nq = 0; nq < 2; ++nq)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int q1 = g + 8 * h;  // n = q1 * 16 + 8 nq + 2 t: unit 2 q1 + nq, word t
        words[4 * mixed_unit(p2, 2 * q1 + nq) + t] = pack(S{}, d2[nq][2 * h], d2[nq][2 * h + 1]);
      }
  }
  __syncwarp();  // T complete for every lane's reads
#pragma unroll 4
  for (int c = 0; c < 32; c += 2) {
    // Matrix m: rows p2 = 8 (m % 2) .. + 7 of unit c + m / 2 (transposed: B's k = p2).
    uint32_t b[4];
    load_matrices_x4_trans(b, chunk + 8 * mixed_unit(8 * (m & 1) + r, c + (m >> 1)));
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      float e[4];  // rows q2 = g (+ 8 for i >= 2), columns n = 8 (c + j) + 2 t (+ 1)
      mma(S{}, e, g2, b[2 * j], b[2 * j + 1]);
      words[4 * mixed_unit(g, c + j) + t] = pack(S{}, e[0], e[1]);
      words[4 * mixed_unit(g + 8, c + j) + t] = pack(S{}, e[2], e[3]);
    }
  }
}

// Staging row J (16 bytes): output J of the tile's 8 chunks, read from their E.
template <class S>
__device__ __forceinline__ void gather_rows(const S* xs, uint4* staging) {
  const auto* values = reinterpret_cast<const uint16_t*>(xs);
#pragma unroll 2
  for (int J = int(threadIdx.x); J < kChunk; J += kThreads) {
    const int offset = 8 * mixed_unit(J >> 8, (J & 255) >> 3) + (J & 7);
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      w[k] = uint32_t(values[(2 * k) * kChunk + offset]) |
             (uint32_t(values[(2 * k + 1) * kChunk + offset]) << 16);
    staging[J] = uint4{w[0], w[1], w[2], w[3]};
  }
}

// Row J of the output gets the unit's 8 << LogCluster values: one 16-byte piece from the
// staging of each CTA h of the cluster. This CTA stores rows [rank, rank + 1) * 4096 >>
// LogCluster.
template <class S, int LogCluster>
__device__ __forceinline__ void store_unit(const uint4* staging, long long u, int rank,
                                           const Triple16Args<S>& a) {
  constexpr int cluster = 1 << LogCluster;
  constexpr int rows = kChunk >> LogCluster;  // rows this CTA stores
  const long long b = u / a.units_per_signal, lu = u % a.units_per_signal;
  const int h = int(threadIdx.x) % cluster;
  const uint4* source = staging;
  if constexpr (LogCluster > 0) source = cluster_shared(staging, h);
  S* yb = a.y + b * a.y_bs + ((lu << LogCluster) + h) * kTileChunks;
#pragma unroll 4
  for (int J = rank * rows + int(threadIdx.x) / cluster; J < (rank + 1) * rows;
       J += kThreads / cluster) {
    uint4 v = source[J];
    auto* yp = reinterpret_cast<uint4*>(yb + J * a.chunks);
    if (a.scale) kron_device::scale_piece<S>(v, yp, a.alpha, a.beta, a.beta_zero);
    *yp = v;
  }
}

template <class S, int LogCluster>
__global__ void __launch_bounds__(kThreads, 1) kron_triple16_kernel(const Triple16Args<S> a) {
  extern __shared__ __align__(128) unsigned char shared_raw[];
  S* buffers = reinterpret_cast<S*>(shared_raw);                  // two input tiles
  auto* staging = reinterpret_cast<uint4*>(buffers + 2 * kTile);  // [J]: 8 chunks' values
  const int rank = LogCluster ? cluster_block_rank() : 0;
  // The factors as A fragments (rows q, k = p), read once.
  uint32_t g0[4], g1[4], g2[4];
  auto setup = [&] {
    kron_device::factor_a_fragment<S>(g0, a.g[0], a.sq[0], a.sp[0], 0, 0);
    kron_device::factor_a_fragment<S>(g1, a.g[1], a.sq[1], a.sp[1], 0, 0);
    kron_device::factor_a_fragment<S>(g2, a.g[2], a.sq[2], a.sp[2], 0, 0);
  };
  const int warp = int(threadIdx.x) >> 5;
  kron_device::run_fused16_units<LogCluster>(
      buffers, kTile, a,
      [&](S* buffer, long long unit) { load_tile<S, LogCluster>(buffer, unit, rank, a); }, setup,
      [&](S* xs) {
        triple_chunk(xs + warp * kChunk, g0, g1, g2);
        __syncthreads();  // every chunk's E is complete
        gather_rows(xs, staging);
      },
      [&](long long unit) { store_unit<S, LogCluster>(staging, unit, rank, a); });
}

}  // namespace

template <ReducedPrecision Storage>
void kron_fused_triple16(std::span<const KronFactorRef<float>> triple, ConstView<Storage> in,
                         MatrixView<Storage> out, float alpha, float beta, bool scale,
                         Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<ShapeError>(triple.size() == 3, "kron_fused_triple16: ", triple.size(),
                      " factors, not three");
  KronShape shapes[3];
  for (int i = 0; i < 3; ++i)
    shapes[i] = {triple[i].P, triple[i].Q};
  require<ShapeError>(
      kron_triple16_fits(shapes, in.rows) && in.rows == out.rows && in.cols == out.cols,
      "kron_fused_triple16: not three 16 x 16 factors on a multiple of ", kKronTriple16TileFeatures,
      " features");
  require<ShapeError>(kron_pair16_aligned(in) && kron_pair16_aligned(out),
                      "kron_fused_triple16: views must be packed batch-first and 16-byte aligned");
  const int log_cluster = device_has_clusters() ? kron_triple16_log_cluster(in.rows) : 0;
  const auto a = kron_device::make_fused16_args<S, 3>(triple, in, out, alpha, beta, scale, kChunk,
                                                      kTileChunks, log_cluster);
  if (a.units == 0) return;

  static_assert(kKronTriple16SharedBytes == sizeof(S) * 3 * kTile);
  auto run = [&](auto kernel) {
    launch_persistent_clusters(kernel, a, 1 << log_cluster, kThreads, kKronTriple16SharedBytes,
                               a.units, static_cast<cudaStream_t>(ctx.stream()),
                               "kron_triple16_kernel");
  };
  switch (log_cluster) {
    case 0:
      run(kron_triple16_kernel<S, 0>);
      break;
    case 1:
      run(kron_triple16_kernel<S, 1>);
      break;
    case 2:
      run(kron_triple16_kernel<S, 2>);
      break;
    default:
      run(kron_triple16_kernel<S, 3>);
      break;
  }
}

template void kron_fused_triple16(std::span<const KronFactorRef<float>>, ConstView<half>,
                                  MatrixView<half>, float, float, bool, Context&);
template void kron_fused_triple16(std::span<const KronFactorRef<float>>, ConstView<bfloat16>,
                                  MatrixView<bfloat16>, float, float, bool, Context&);

}  // namespace strop::detail
