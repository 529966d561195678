// The fused output-stationary KS kernel on tensor cores, for half and bfloat16 signals
// (fp32 accumulation, one rounding of each output).
//
// A thread block owns an output tile of TJ consecutive j x TK rows k x TN signals of one i
// (the b x c blocks of those TJ groups, as in ks_fused.cu) and walks the input index l in
// chunks of kChunk. Per chunk it copies the X rows and the weights of its groups from
// global memory to shared memory, both with l contiguous (X as [j][n][l], W as [j][k][l]),
// so that ldmatrix hands out the fragments of mma.m16n8k16 directly: M = outputs k,
// N = signals, K = inputs l. The next chunk's global loads are issued before the current
// chunk's products (register prefetch), so their latency hides behind the tensor cores.
//
// Global accesses follow the memory order of the layout, 16 bytes at a time where the run
// allows: along the signals when each feature's batch is contiguous (RowMajor), along the
// flattened (l, j) feature index otherwise (ColMajor), where a tile of TJ = d (or 8) groups
// makes runs of contiguous features. The weights come from a copy laid out
// [a][d][out][in] for this op (in contiguous), so they load as 16-byte vectors too.
// The accumulators go through shared memory (fp32) on the way out, so that Y is written in
// its memory order with 16-byte stores, alpha and beta applied in fp32.
// The tile (TJ, the warps along k and n, and a warp's 16 MF x 8 NF shape, 16 x 32 to 64 x 64)
// is one of ks_mma_tile.hpp's configurations: the heuristic's, or the one tuning measured.
// Pipelined tiles go to ks_mma_pipelined.cu (batch-first signals) where it applies.
#include <algorithm>
#include <bit>
#include <cstdint>

#include <cuda_pipeline.h>

#include "operators/ks/ks_device.hpp"
#include "operators/ks/ks_mma_tile.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = kMmaThreads;
constexpr int kChunk = kMmaChunk;
constexpr int kChunkLog = std::countr_zero(unsigned(kChunk));
constexpr int kRow = kMmaRow;
static_assert(kChunk == 32, "two k16 steps per chunk");

struct MmaKSArgs {
  const void* x;
  Index x_rs, x_cs;
  void* y;
  Index y_rs, y_cs;
  const void* w;  // [a][d][out][in] for this op
  Index out_group, in_group, d, batch;
  Index k_tiles, j_tiles;
  float alpha, beta;
  int tj, tk, tn;  // the block's tile: powers of two, so that tile indices are shifts and masks
  int tj_log, tk_log, tn_log;
  int warps_k, warps_n;  // warps along k and n (warps along j: tj)
  bool x_runs, y_runs;   // X's / Y's runs of 8 along the fast axis are contiguous in memory
};

// Eight 16-bit values travel as one uint4.
union Eight {
  uint4 vector;
  uint16_t value[8];
};

// Position of the v-th 16-byte vector of a signal tile (X or Y) within the block's tile:
// along the signals (BatchContiguous) or along the flattened feature index f = m tj + jx
// (m: l for X, k for Y), the signals outermost.
template <bool BatchContiguous>
struct TilePosition {
  int jx, m, n;  // of the first of the eight values
  // rows_log: log2 of the values of m per group in the tile (kChunk for X, tk for Y).
  __device__ TilePosition(int v, int tj_log, int rows_log, int tn_log) {
    if constexpr (BatchContiguous) {
      const int per_row_log = tn_log - 3;
      n = (v & ((1 << per_row_log) - 1)) * 8;
      const int rest = v >> per_row_log;
      m = rest & ((1 << rows_log) - 1);
      jx = rest >> rows_log;
    } else {
      const int per_signal_log = rows_log + tj_log - 3;
      const int f = (v & ((1 << per_signal_log) - 1)) * 8;
      n = v >> per_signal_log;
      m = f >> tj_log;
      jx = f & ((1 << tj_log) - 1);
    }
  }
  // The e-th of the eight values.
  __device__ void at(int e, int tj_log, int& jx_e, int& m_e, int& n_e) const {
    if constexpr (BatchContiguous) {
      jx_e = jx, m_e = m, n_e = n + e;
    } else {
      const int f = (m << tj_log) + jx + e;
      jx_e = f & ((1 << tj_log) - 1), m_e = f >> tj_log, n_e = n;
    }
  }
};

// Loads the X values of chunk l0 into `regs` (zero outside the problem).
// A block's X chunk is tj tn kChunk values, at most 8 warps x 8 NF signals x kChunk: NF
// 16-byte vectors per thread.
template <bool BC, int NF>
__device__ __forceinline__ void load_x_chunk(const MmaKSArgs& p, Index i, Index j0, Index n0,
                                             Index l0, Eight (&regs)[NF]) {
  const int vectors = p.tj * p.tn * kChunk / 8;
  const auto* x = static_cast<const uint16_t*>(p.x);
  const Index row0 = i * p.in_group * p.d + j0;
#pragma unroll
  for (int r = 0; r < NF; ++r) {
    const int v = int(threadIdx.x) + r * kThreads;
    if (v >= vectors) break;
    const TilePosition<BC> at(v, p.tj_log, kChunkLog, p.tn_log);
    const Index first = (row0 + (l0 + at.m) * p.d + at.jx) * p.x_rs + (n0 + at.n) * p.x_cs;
    int last_jx, last_l, last_n;
    at.at(7, p.tj_log, last_jx, last_l, last_n);
    const bool whole = p.x_runs && l0 + last_l < p.in_group && j0 + last_jx < p.d &&
                       n0 + last_n < p.batch && j0 + at.jx < p.d &&
                       (reinterpret_cast<uintptr_t>(x + first) & 15) == 0;
    if (whole) {
      regs[r].vector = *reinterpret_cast<const uint4*>(x + first);
      continue;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      int jx, l, n;
      at.at(e, p.tj_log, jx, l, n);
      const bool inside = l0 + l < p.in_group && j0 + jx < p.d && n0 + n < p.batch;
      // Along the signals only n moves: a stride from the first value.
      const Index at_x =
          BC ? first + e * p.x_cs : (row0 + (l0 + l) * p.d + jx) * p.x_rs + (n0 + n) * p.x_cs;
      regs[r].value[e] = inside ? x[at_x] : uint16_t(0);
    }
  }
}

// Stores them as xs[jx][n][l] (l contiguous, rows of kRow).
template <bool BC, int NF>
__device__ __forceinline__ void store_x_chunk(const MmaKSArgs& p, uint16_t* xs,
                                              const Eight (&regs)[NF]) {
  const int vectors = p.tj * p.tn * kChunk / 8;
#pragma unroll
  for (int r = 0; r < NF; ++r) {
    const int v = int(threadIdx.x) + r * kThreads;
    if (v >= vectors) break;
    const TilePosition<BC> at(v, p.tj_log, kChunkLog, p.tn_log);
    if (!BC && p.tj == 1) {  // eight consecutive l of one signal: one 16-byte store
      *reinterpret_cast<uint4*>(xs + at.n * kRow + at.m) = regs[r].vector;
      continue;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      int jx, l, n;
      at.at(e, p.tj_log, jx, l, n);
      xs[(jx * p.tn + n) * kRow + l] = regs[r].value[e];
    }
  }
}

// Stages the weights of chunk l0 as ws[jx][k][l]: vectors of eight l of one (jx, k), copied
// with cp.async (no registers, in flight while the previous chunk is multiplied) where they
// are whole and aligned, else value by value (tails, odd sizes). At most 8 warps x 16 MF
// outputs x kChunk values: 2 MF vectors per thread.
template <int MF>
__device__ __forceinline__ void stage_w_chunk(const MmaKSArgs& p, uint16_t* ws, Index i, Index j0,
                                              Index k0, Index l0) {
  const int vectors = p.tj * p.tk * kChunk / 8;
  const auto* w = static_cast<const uint16_t*>(p.w);
#pragma unroll
  for (int r = 0; r < 2 * MF; ++r) {
    const int v = int(threadIdx.x) + r * kThreads;
    if (v >= vectors) break;
    const int l = (v % (kChunk / 8)) * 8;
    const int row = v / (kChunk / 8);  // jx tk + k
    const int k = row & (p.tk - 1), jx = row >> p.tk_log;
    const bool row_inside = j0 + jx < p.d && k0 + k < p.out_group;
    const Index first = ((i * p.d + j0 + jx) * p.out_group + k0 + k) * p.in_group + l0 + l;
    uint16_t* dst = ws + row * kRow + l;
    if (row_inside && l0 + l + 8 <= p.in_group &&
        (reinterpret_cast<uintptr_t>(w + first) & 15) == 0) {
      __pipeline_memcpy_async(dst, w + first, 16);
      continue;
    }
    Eight values;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      values.value[e] = row_inside && l0 + l + e < p.in_group ? w[first + e] : uint16_t(0);
    *reinterpret_cast<uint4*>(dst) = values.vector;
  }
  __pipeline_commit();
}

// A warp's tile: 16 MF outputs x 8 NF signals (NF even: ldmatrix.x4 gives two n8 fragments).
// Two blocks per multiprocessor where the accumulators leave registers for it.
template <class S, int MF, int NF, bool BC>
__global__ void __launch_bounds__(kThreads, BC || MF * NF > 8 ? 1 : 2)
    ks_mma_kernel(const MmaKSArgs p) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  auto* xs = reinterpret_cast<uint16_t*>(shared_raw);  // [tj][tn][kRow]
  uint16_t* ws = xs + p.tj * p.tn * kRow;              // [2][tj][tk][kRow]: two stages
  const int w_stage = p.tj * p.tk * kRow;
  auto* cs = reinterpret_cast<float*>(shared_raw);  // [tj][tk][tn + 1], after the loop

  Index block = blockIdx.x;
  const Index k0 = (block % p.k_tiles) * p.tk;
  block /= p.k_tiles;
  const Index j0 = (block % p.j_tiles) * p.tj;
  const Index i = block / p.j_tiles;
  const Index n0 = Index(blockIdx.y) * p.tn;

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int wn = warp % p.warps_n;
  const int wk = (warp / p.warps_n) % p.warps_k;
  const int wj = warp / (p.warps_n * p.warps_k);
  const int warp_k = wk * 16 * MF, warp_n = wn * 8 * NF;

  float acc[MF][NF][4];
#pragma unroll
  for (int m = 0; m < MF; ++m)
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[m][f][e] = 0.0f;

  // X: registers one chunk ahead (its shared layout is a scatter); W: cp.async, two stages.
  Eight x_regs[NF];
  load_x_chunk<BC, NF>(p, i, j0, n0, 0, x_regs);
  stage_w_chunk<MF>(p, ws, i, j0, k0, 0);
  int stage = 0;
  for (Index l0 = 0; l0 < p.in_group; l0 += kChunk, stage ^= 1) {
    const bool more = l0 + kChunk < p.in_group;
    store_x_chunk<BC, NF>(p, xs, x_regs);
    if (more) {
      stage_w_chunk<MF>(p, ws + (stage ^ 1) * w_stage, i, j0, k0, l0 + kChunk);
      __pipeline_wait_prior(1);  // this chunk's weights have landed
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    if (more) load_x_chunk<BC, NF>(p, i, j0, n0, l0 + kChunk, x_regs);  // in flight meanwhile
    const uint16_t* wc = ws + stage * w_stage;
#pragma unroll
    for (int step = 0; step < kChunk; step += 16) {
      uint32_t a[MF][4];
#pragma unroll
      for (int m = 0; m < MF; ++m) {
        const int row = wj * p.tk + warp_k + m * 16 + lane % 16;
        load_matrices_x4(a[m], wc + row * kRow + step + (lane / 16) * 8);
      }
#pragma unroll
      for (int pair = 0; pair < NF / 2; ++pair) {  // two n8 fragments per ldmatrix.x4
        uint32_t b[4];
        const int n = wj * p.tn + warp_n + pair * 16 + (lane / 16) * 8 + lane % 8;
        load_matrices_x4(b, xs + n * kRow + step + ((lane / 8) % 2) * 8);
#pragma unroll
        for (int m = 0; m < MF; ++m) {
          mma_add(S{}, acc[m][2 * pair], a[m], b[0], b[1], acc[m][2 * pair]);
          mma_add(S{}, acc[m][2 * pair + 1], a[m], b[2], b[3], acc[m][2 * pair + 1]);
        }
      }
    }
    __syncthreads();
  }

  // Accumulators -> cs[jx][k][n] (fp32), then Y in its memory order.
  const int cs_row = p.tn + 1;
  {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int m = 0; m < MF; ++m)
#pragma unroll
      for (int f = 0; f < NF; ++f)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int k = warp_k + m * 16 + g + (e / 2) * 8;
          const int n = warp_n + f * 8 + 2 * t + e % 2;
          cs[(wj * p.tk + k) * cs_row + n] = acc[m][f][e];
        }
  }
  __syncthreads();
  auto* y = static_cast<S*>(p.y);
  const Index row0 = i * p.out_group * p.d + j0;
  const int vectors = p.tj * p.tk * p.tn / 8;
  for (int v = int(threadIdx.x); v < vectors; v += kThreads) {
    const TilePosition<BC> at(v, p.tj_log, p.tk_log, p.tn_log);
    float out[8];
    bool whole = p.y_runs;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      int jx, k, n;
      at.at(e, p.tj_log, jx, k, n);
      whole = whole && k0 + k < p.out_group && j0 + jx < p.d && n0 + n < p.batch;
      out[e] = p.alpha * cs[(jx * p.tk + k) * cs_row + n];
    }
    S* first = y + (row0 + (k0 + at.m) * p.d + at.jx) * p.y_rs + (n0 + at.n) * p.y_cs;
    if (whole && (reinterpret_cast<uintptr_t>(first) & 15) == 0) {
      if (p.beta != 0.0f) {
        const uint4 old = *reinterpret_cast<const uint4*>(first);
        const uint32_t words[4] = {old.x, old.y, old.z, old.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float2 pair = unpack(S{}, words[q]);
          out[2 * q] += p.beta * pair.x;
          out[2 * q + 1] += p.beta * pair.y;
        }
      }
      *reinterpret_cast<uint4*>(first) =
          make_uint4(pack(S{}, out[0], out[1]), pack(S{}, out[2], out[3]),
                     pack(S{}, out[4], out[5]), pack(S{}, out[6], out[7]));
      continue;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      int jx, k, n;
      at.at(e, p.tj_log, jx, k, n);
      if (k0 + k >= p.out_group || j0 + jx >= p.d || n0 + n >= p.batch) continue;
      S* at_y = y + (row0 + (k0 + k) * p.d + jx) * p.y_rs + (n0 + n) * p.y_cs;
      float value = out[e];
      if (p.beta != 0.0f) value += p.beta * load_value(at_y);
      store_value(at_y, value);
    }
  }
}

template <class S, int MF, int NF>
void launch_mma(const MmaKSArgs& args, bool batch_contiguous, dim3 grid, std::size_t shared,
                cudaStream_t stream) {
  const auto kernel =
      batch_contiguous ? ks_mma_kernel<S, MF, NF, true> : ks_mma_kernel<S, MF, NF, false>;
  // Above the default 48 KB without the opt-in.
  allow_dynamic_shared_memory(kernel, shared, "ks mma kernel: shared memory");
  kernel<<<grid, kThreads, shared, stream>>>(args);
  check_launch("ks_mma_kernel");
}

}  // namespace

template <class Storage>
void ks_mma_apply(const KSPattern& p, const Storage* w_op, Op op, ConstView<Storage> X,
                  MatrixView<Storage> Y, float alpha, float beta,
                  const std::optional<KSMmaTile>& tile, Context& ctx) {
  using S = DeviceScalar<Storage>;
  const bool transposed = op != Op::NoTrans;
  const bool batch_contiguous = X.col_stride == 1 || X.cols == 1;
  const Index out = transposed ? p.c : p.b;
  const std::size_t shared_per_block = shared_memory_per_block();
  KSMmaTile t =
      tile.value_or(ks_mma_heuristic_tile(out, p.d, X.cols, batch_contiguous, shared_per_block));
  require<DeviceError>(ks_mma_tile_supported(t), "ks mma kernel: unsupported tile ", to_string(t));
  if (t.pipelined) {
    if (ks_mma_pipelined_apply(p, w_op, op, X, Y, alpha, beta, t, ctx)) return;
    // Its requirements do not hold: this kernel, same geometry where it fits.
    t = ks_mma_fitting_tile(t, out, X.cols, shared_per_block);
  }
  MmaKSArgs args{};
  args.x = X.data;
  args.x_rs = X.row_stride;
  args.x_cs = X.col_stride;
  args.y = Y.data;
  args.y_rs = Y.row_stride;
  args.y_cs = Y.col_stride;
  args.w = w_op;
  args.out_group = transposed ? p.c : p.b;
  args.in_group = transposed ? p.b : p.c;
  args.d = p.d;
  args.batch = X.cols;
  args.alpha = alpha;
  args.beta = beta;
  args.tj = t.tj;
  args.warps_k = t.warps_k;
  args.warps_n = t.warps_n;
  args.tk = t.tk();
  args.tn = t.tn();
  args.tj_log = std::countr_zero(unsigned(args.tj));
  args.tk_log = std::countr_zero(unsigned(args.tk));
  args.tn_log = std::countr_zero(unsigned(args.tn));
  // Runs of eight along the fast axis are contiguous: signals with unit stride (RowMajor),
  // or features with unit stride and the tile's groups covering whole runs (ColMajor).
  const auto runs = [&](Index rs, Index cs) {
    return batch_contiguous ? cs == 1 : rs == 1 && (args.tj == p.d || args.tj % 8 == 0);
  };
  args.x_runs = runs(X.row_stride, X.col_stride);
  args.y_runs = runs(Y.row_stride, Y.col_stride);
  const GroupTileGrid g =
      group_tile_grid(p, args.out_group, args.tk, args.tj, X.cols, args.tn, "ks mma kernel");
  args.k_tiles = g.k_tiles;
  args.j_tiles = g.j_tiles;
  const std::size_t shared = t.shared_bytes();
  const dim3 grid(g.x, g.y);
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  // The warp shapes of ks_mma_tile_supported.
  if (t.mf == 1) return launch_mma<S, 1, 4>(args, batch_contiguous, grid, shared, stream);
  if (t.mf == 4) return launch_mma<S, 4, 8>(args, batch_contiguous, grid, shared, stream);
  if (t.nf == 8) return launch_mma<S, 2, 8>(args, batch_contiguous, grid, shared, stream);
  launch_mma<S, 2, 4>(args, batch_contiguous, grid, shared, stream);
}

template void ks_mma_apply(const KSPattern&, const half*, Op, ConstView<half>, MatrixView<half>,
                           float, float, const std::optional<KSMmaTile>&, Context&);
template void ks_mma_apply(const KSPattern&, const bfloat16*, Op, ConstView<bfloat16>,
                           MatrixView<bfloat16>, float, float, const std::optional<KSMmaTile>&,
                           Context&);

}  // namespace strop::detail
