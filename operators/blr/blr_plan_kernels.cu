// The BLR GEMM plans' device kernels (blr_plan_kernels.hpp): the unfused baselines' strided
// copies (16-bit values scaled in fp32): runs along a dimension contiguous in dst (in 16-byte
// vectors where both sides allow), or tiles through shared memory where the dimension
// contiguous in src is another one (what PyTorch's permute().contiguous() does too): of
// 16-byte vectors where both contiguous sides allow, else 32 x 32 single values, a short side
// grouped with the dimension that continues it, so that both sides move whole memory
// segments; and batched products with small inner and outer sizes, streamed row by row.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/blr/blr_plan_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = 256;

template <class S>
using CopyCompute = std::conditional_t<std::is_same_v<S, double>, double, float>;

// *out = v, or alpha v (+ beta *out) when the copy is `scaled`, in fp32 (fp64 for double).
template <class S>
__device__ __forceinline__ void store_copied(const StridedCopy& c, S* out, CopyCompute<S> v) {
  using Compute = CopyCompute<S>;
  if (!c.scaled) {
    store_value(out, v);
  } else if (c.beta == 0) {
    store_value(out, Compute(c.alpha) * v);
  } else {
    store_value(out, Compute(c.alpha) * v + Compute(c.beta) * Compute(load_value(out)));
  }
}

// Which dimension the threads of a block walk, and which index the blocks. Splitting a
// block's index costs a few divisions per block, none per value.
struct CopyAxes {
  int inner;     // the dimension threadIdx.x walks (transpose: when reading src)
  int across;    // transpose: the dimension contiguous in dst, walked when writing
  int outer[3];  // the others, N of them (runs: 3, transpose: 2)
};

template <int N>
__device__ __forceinline__ void split_block(const StridedCopy& c, Index block, const CopyAxes& axes,
                                            Index& src_offset, Index& dst_offset) {
  src_offset = dst_offset = 0;
#pragma unroll
  for (int k = N - 1; k >= 0; --k) {
    const int dim = axes.outer[k];
    const Index i = block % c.dims[dim];
    block /= c.dims[dim];
    src_offset += i * c.src_strides[dim];
    dst_offset += i * c.dst_strides[dim];
  }
}

// Copies where one dimension is contiguous in dst (and in src, or nowhere): kRows runs per
// block, threadIdx.x along the run, so both sides are read or written in whole segments;
// blockIdx.y takes `chunk` values of each run, so that a few long runs (a column of a few
// signals) spread over many blocks instead of one warp looping over each (every turn of that
// loop waits for its load: 77 us for one 4096-value column, session 29).
constexpr int kRows = 8;
template <class S>
__global__ void strided_runs_kernel(const StridedCopy c, const CopyAxes axes, Index rows,
                                    Index chunk) {
  const Index row = Index(blockIdx.x) * kRows + threadIdx.y;
  if (row >= rows) return;
  Index s, d;
  split_block<3>(c, row, axes, s, d);
  const S* src = static_cast<const S*>(c.src) + s;
  S* dst = static_cast<S*>(c.dst) + d;
  const Index n = c.dims[axes.inner], ss = c.src_strides[axes.inner],
              ds = c.dst_strides[axes.inner];
  const Index begin = Index(blockIdx.y) * chunk, end = begin + chunk < n ? begin + chunk : n;
  for (Index i = begin + threadIdx.x; i < end; i += 32)
    store_copied(c, dst + i * ds, CopyCompute<S>(load_value(src + i * ss)));
}

// The same copies where the runs are contiguous on both sides in whole 16-byte vectors
// (strided_copy checks the alignment): a thread moves a vector instead of a value, so a warp
// has 8x (16-bit) the bytes in flight and 1/8 of the index arithmetic per byte, and
// blockDim.x threads (fewer than 32 for short runs: 64 16-bit values are 8 vectors) share a
// run, blockDim.y runs per block.
template <class S>
__global__ void strided_vector_runs_kernel(const StridedCopy c, const CopyAxes axes, Index rows,
                                           Index chunk) {
  constexpr int V = 16 / int(sizeof(S));
  const Index row = Index(blockIdx.x) * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  Index s, d;
  split_block<3>(c, row, axes, s, d);
  const S* src = static_cast<const S*>(c.src) + s;
  S* dst = static_cast<S*>(c.dst) + d;
  const Index n = c.dims[axes.inner];
  const Index begin = Index(blockIdx.y) * chunk, end = begin + chunk < n ? begin + chunk : n;
  for (Index i = begin + Index(threadIdx.x) * V; i < end; i += Index(blockDim.x) * V) {
    alignas(16) S in[V], out[V];
    *reinterpret_cast<uint4*>(in) = *reinterpret_cast<const uint4*>(src + i);
    if (c.scaled && c.beta != 0)
      *reinterpret_cast<uint4*>(out) = *reinterpret_cast<uint4*>(dst + i);
#pragma unroll
    for (int k = 0; k < V; ++k)
      store_copied(c, out + k, CopyCompute<S>(load_value(in + k)));
    *reinterpret_cast<uint4*>(dst + i) = *reinterpret_cast<const uint4*>(out);
  }
}

// Transposes (both kernels below) turn the dimension contiguous in src (axes.inner) into
// another one contiguous in dst (axes.across). A side of fewer than 32 values takes in the
// outer dimension that continues it contiguously (transpose_groups: `in` groups of inner's
// values, `across` groups of across's; that dimension's size is 1 in the kernels' copy), so
// that a tile still reads and writes long runs: BLAST's (L, B, r) -> (r, B, L) at L = b = 3
// writes runs of B x L values, not of 3. Position g of the inner side is then value g of a
// contiguous run in src, position h of the across side value h of one in dst.
struct TransposeGroups {
  Index in = 1, in_dst_stride = 0;          // inner's groups and their stride in dst
  Index across = 1, across_src_stride = 0;  // across's groups and their stride in src
};
// The offset of position p of a side of n values a group (stride `stride` within one group,
// `group_stride` between groups) on the other side. 32-bit division: transpose_groups groups
// only sides of fewer than 2^31 values.
__device__ __forceinline__ Index grouped_offset(Index p, Index n, Index stride, Index groups,
                                                Index group_stride) {
  if (groups == 1) return p * stride;
  const unsigned q = unsigned(p) / unsigned(n);
  return (Index(unsigned(p) - q * unsigned(n))) * stride + Index(q) * group_stride;
}

// Transposes of single values: 32 x 32 tiles through shared memory (padded against bank
// conflicts), read along inner and written along across.
template <class S>
__global__ void strided_transpose_kernel(const StridedCopy c, const CopyAxes axes,
                                         const TransposeGroups groups) {
  using Compute = CopyCompute<S>;
  __shared__ Compute tile[32][33];
  const Index n_in = c.dims[axes.inner], n_across = c.dims[axes.across];
  const Index all_in = n_in * groups.in, all_across = n_across * groups.across;
  const Index tiles_in = (all_in + 31) / 32, tiles_across = (all_across + 31) / 32;
  Index block = blockIdx.x;
  const Index t_in = block % tiles_in;
  block /= tiles_in;
  const Index t_across = block % tiles_across;
  block /= tiles_across;
  Index s, d;
  split_block<2>(c, block, axes, s, d);
  const S* src = static_cast<const S*>(c.src) + s;
  S* dst = static_cast<S*>(c.dst) + d;
  const Index in0 = t_in * 32, across0 = t_across * 32;
  for (int y = int(threadIdx.y); y < 32; y += kRows) {
    const Index g = in0 + threadIdx.x, h = across0 + y;
    if (g < all_in && h < all_across)
      tile[y][threadIdx.x] =
          Compute(load_value(src + g +
                             grouped_offset(h, n_across, c.src_strides[axes.across], groups.across,
                                            groups.across_src_stride)));
  }
  __syncthreads();
  for (int y = int(threadIdx.y); y < 32; y += kRows) {
    const Index h = across0 + threadIdx.x, g = in0 + y;
    if (g < all_in && h < all_across)
      store_copied(
          c,
          dst + h +
              grouped_offset(g, n_in, c.dst_strides[axes.inner], groups.in, groups.in_dst_stride),
          tile[threadIdx.x][y]);
  }
}

// Transposes whose two contiguous sides (grouped, above) both come in whole 16-byte vectors,
// or whose src rows are short and packed one after another (VectorTile::packed) (Monarch's
// r <-> K swap, BLAST's (L, B, r) <-> (r, B, L)): a warp moves a tile of `across` x `in`
// values through its own shared buffer, reading src in 16-byte vectors along inner and writing
// dst in 16-byte vectors along across (rows padded to an odd number of 32-bit words against
// bank conflicts, unless packed). The 32 x 32 tiles of single values took 114-122 us for 64 MB of
// bf16 on an H100 (1 KB per block and barrier; session 47), this kernel 20 us on an H200.
constexpr int kVectorTransposeBufferBytes = 4608;  // per warp; 8 warps: 36 KB per block
template <class S>
__host__ __device__ constexpr int vector_transpose_pad() {  // values after each buffer row
  return sizeof(S) >= 4 ? 1 : int(4 / sizeof(S));
}
struct VectorTile {
  int in = 0, across = 0;  // values of a warp's tile along each dimension (0: no tile)
  // Whole src rows of fewer values than whole vectors, contiguous one after the other (Monarch's
  // r <-> K swap at K = b = 4): the tile is one run in src, loaded as such into an unpadded
  // buffer.
  bool packed = false;
};
template <class S>
__global__ void __launch_bounds__(256)
    vector_transpose_kernel(const StridedCopy c, const CopyAxes axes, const TransposeGroups groups,
                            VectorTile t, Index tiles) {
  constexpr int V = 16 / int(sizeof(S));
  __shared__ __align__(16) unsigned char buffers[8][kVectorTransposeBufferBytes];
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  S* buf = reinterpret_cast<S*>(buffers[warp]);
  const int ld = t.packed ? t.in : t.in + vector_transpose_pad<S>();
  const Index n_in = c.dims[axes.inner], n_across = c.dims[axes.across];
  const Index all_in = n_in * groups.in, all_across = n_across * groups.across;
  const Index tiles_in = (all_in + t.in - 1) / t.in,
              tiles_across = (all_across + t.across - 1) / t.across;
  const Index src_row = c.src_strides[axes.across], dst_row = c.dst_strides[axes.inner];
  for (Index j = Index(blockIdx.x) * 8 + warp; j < tiles; j += Index(gridDim.x) * 8) {
    Index rest = j;
    const Index i0 = rest % tiles_in * t.in;
    rest /= tiles_in;
    const Index a0 = rest % tiles_across * t.across;
    rest /= tiles_across;
    Index s, d;
    split_block<2>(c, rest, axes, s, d);
    const S* src = static_cast<const S*>(c.src) + s + i0;
    S* dst = static_cast<S*>(c.dst) + d + a0;
    // The last tile of a side may be shorter (whole vectors still: both sides are multiples
    // of V).
    const int in = int(all_in - i0 < t.in ? all_in - i0 : t.in);
    const int across = int(all_across - a0 < t.across ? all_across - a0 : t.across);
    const int m = in * across;
#pragma unroll 4
    // Row a of src's tile, from column i (packed: a vector may go on into the next row, which
    // follows it in src and in the buffer).
    for (int v = lane * V; v < m; v += 32 * V) {
      const int a = v / in, i = v % in;
      const Index row =
          grouped_offset(a0 + a, n_across, src_row, groups.across, groups.across_src_stride);
      const uint4 x = *reinterpret_cast<const uint4*>(src + row + i);
      uint32_t* to = reinterpret_cast<uint32_t*>(buf + a * ld + i);
      to[0] = x.x, to[1] = x.y, to[2] = x.z, to[3] = x.w;
    }
    __syncwarp();
    for (int e = lane * V; e < m; e += 32 * V) {  // row i of dst's tile, from column a
      const int i = e / across, a = e % across;
      S* to = dst + grouped_offset(i0 + i, n_in, dst_row, groups.in, groups.in_dst_stride) + a;
      alignas(16) S out[V];
      if (c.scaled && c.beta != 0) *reinterpret_cast<uint4*>(out) = *reinterpret_cast<uint4*>(to);
#pragma unroll
      for (int k = 0; k < V; ++k)
        store_copied(c, out + k, CopyCompute<S>(load_value(buf + (a + k) * ld + i)));
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(out);
    }
    __syncwarp();  // the buffer is read before the next tile is loaded
  }
}

// vector_transpose_kernel's tile for a transpose: whole rows of both sides where they fit the
// warp's buffer, else the longer side halved (rounded up to whole vectors) until they do; the
// last tile of a side takes what is left. None unless both sides are whole vectors, or the
// across side is and `packed_rows` (src's rows follow one another): then whole src rows, packed.
template <class S>
VectorTile vector_tile(Index n_in, Index n_across, bool packed_rows) {
  constexpr Index V = 16 / Index(sizeof(S));
  const bool packed = packed_rows && n_in % V != 0;
  if ((n_in % V != 0 && !packed) || n_across % V != 0) return {};
  Index in = n_in, across = n_across;
  auto halved = [](Index n) { return ((n + 1) / 2 + V - 1) / V * V; };
  while ((in + (packed ? 0 : vector_transpose_pad<S>())) * across * Index(sizeof(S)) >
         kVectorTransposeBufferBytes) {
    if (in >= across && in > V && !packed) {
      in = halved(in);
    } else if (across > V) {
      across = halved(across);
    } else {
      return {};
    }
  }
  return {int(in), int(across), packed};
}

// Two consecutive values at an address aligned to both (rows 2i and 2i + 1 of a column), as
// Compute, in one access: a 32-bit word of two 16-bit values (mma16.cuh's pack/unpack), or a
// float2 / double2.
template <class S>
using WidePair = std::conditional_t<std::is_same_v<S, double>, double2, float2>;
template <class S, class C>
__device__ __forceinline__ void load_pair(const S* p, C& x, C& y) {
  if constexpr (sizeof(S) == 2) {
    const float2 f = unpack(S(), *reinterpret_cast<const uint32_t*>(p));
    x = f.x, y = f.y;
  } else {
    const WidePair<S> v = *reinterpret_cast<const WidePair<S>*>(p);
    x = v.x, y = v.y;
  }
}
template <class S, class C>
__device__ __forceinline__ void store_pair(S* p, C x, C y) {
  if constexpr (sizeof(S) == 2) {
    *reinterpret_cast<uint32_t*>(p) = pack(S(), x, y);
  } else {
    *reinterpret_cast<WidePair<S>*>(p) = {x, y};
  }
}

// small_inner_gemm: each thread computes whole rows of C_j (kRowsPerThread of them), all n
// outputs of a row from its k inputs; op(B_j) sits in shared memory, padded to N x N with
// zeros, and is read as broadcasts, each value used for `At` rows at once. N (k and n
// rounded up) and At are template parameters so that the rows' inputs and sums stay in
// registers. A thread's rows are a block's width apart (a warp's accesses cover
// consecutive rows), or, `Paired`, two neighbours read and written in one access each (a
// warp's accesses cover 128 bytes of 16-bit values instead of 64).
constexpr int kRowsPerThread = 2;
template <class S, int N, int At, bool Paired>
__global__ void __launch_bounds__(kThreads) small_inner_gemm_kernel(const SmallInnerGemm g) {
  static_assert(kRowsPerThread % At == 0 && (!Paired || At == 2), "rows taken At at a time");
  using Compute = CopyCompute<S>;
  __shared__ Compute op_b[N * N];  // op(B_j)(p, q) at p N + q
  const Index j = blockIdx.x;
  const S* b = static_cast<const S*>(g.b) + j * g.stride_b;
  for (int e = int(threadIdx.x); e < N * N; e += kThreads) {
    const int p = e / N, q = e % N;
    op_b[e] = p < g.k && q < g.n
                  ? Compute(load_value(b + (g.trans_b ? q + p * g.ldb : p + q * g.ldb)))
                  : Compute(0);
  }
  __syncthreads();
  const S* a = static_cast<const S*>(g.a) + j * g.stride_a;
  S* c = static_cast<S*>(g.c) + j * g.stride_c;
  const Compute alpha = Compute(g.alpha), beta = Compute(g.beta);
  const Index block_row = Index(blockIdx.y) * kRowsPerThread * kThreads;
#pragma unroll 1  // unrolled, the groups would keep all of op(B_j) in registers
  for (int group = 0; group < kRowsPerThread / At; ++group) {
    Index row[At];
#pragma unroll
    for (int r = 0; r < At; ++r)
      row[r] = Paired ? block_row + 2 * threadIdx.x + r
                      : block_row + (group * At + r) * kThreads + threadIdx.x;
    // Paired: both rows in one access where both exist (m odd: the last row alone).
    const bool pair = Paired && row[At - 1] < g.m;
    Compute in[At][N], sum[At][N] = {};
#pragma unroll
    for (int p = 0; p < N; ++p) {
      if (pair) {
        if (p < g.k) {
          load_pair(a + row[0] + p * g.lda, in[0][p], in[At - 1][p]);
        } else {
          in[0][p] = in[At - 1][p] = Compute(0);
        }
        continue;
      }
#pragma unroll
      for (int r = 0; r < At; ++r)
        in[r][p] =
            row[r] < g.m && p < g.k ? Compute(load_value(a + row[r] + p * g.lda)) : Compute(0);
    }
#pragma unroll
    for (int p = 0; p < N; ++p) {
#pragma unroll
      for (int q = 0; q < N; ++q) {
        const Compute v = op_b[p * N + q];
#pragma unroll
        for (int r = 0; r < At; ++r)
          sum[r][q] += in[r][p] * v;
      }
      // Keeps the compiler from loading all of op(B_j) into registers ahead of the sums.
      asm volatile("" ::: "memory");
    }
#pragma unroll
    for (int q = 0; q < N; ++q) {
      if (q >= g.n) break;
      if (pair) {
        S* out = c + row[0] + q * g.ldc;
        Compute old0 = 0, old1 = 0;
        if (beta != Compute(0)) load_pair(out, old0, old1);
        store_pair(out, alpha * sum[0][q] + beta * old0, alpha * sum[At - 1][q] + beta * old1);
        continue;
      }
#pragma unroll
      for (int r = 0; r < At; ++r) {
        if (row[r] >= g.m) continue;
        S* out = c + row[r] + q * g.ldc;
        store_value(out, beta == Compute(0) ? alpha * sum[r][q]
                                            : alpha * sum[r][q] + beta * Compute(load_value(out)));
      }
    }
  }
}

// Both rows of a thread at once where their inputs and sums fit in registers (up to 16
// fp32 values per row each), one at a time otherwise; neighbouring rows paired where every
// pair starts aligned.
template <class S, int N>
void launch_small_inner_gemm(const SmallInnerGemm& g, dim3 grid, cudaStream_t stream) {
  constexpr int at = N * sizeof(CopyCompute<S>) <= 64 ? 2 : 1;
  auto aligned = [](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (2 * sizeof(S)) == 0;
  };
  if constexpr (at == 2) {
    const bool paired = aligned(g.a) && aligned(g.c) && g.lda % 2 == 0 && g.ldc % 2 == 0 &&
                        g.stride_a % 2 == 0 && g.stride_c % 2 == 0;
    if (paired) {
      small_inner_gemm_kernel<S, N, 2, true><<<grid, kThreads, 0, stream>>>(g);
      return;
    }
  }
  small_inner_gemm_kernel<S, N, at, false><<<grid, kThreads, 0, stream>>>(g);
}

}  // namespace

template <class Storage>
void small_inner_gemm(const SmallInnerGemm& g, Context& ctx) {
  require<DeviceError>(g.k <= kSmallInnerMax && g.n <= kSmallInnerMax,
                       "small_inner_gemm: k and n must be at most ", kSmallInnerMax);
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  using S = DeviceScalar<Storage>;
  if constexpr (is_reduced_precision_v<Storage>) {
    if (g.tensor_cores && small_inner_mma_takes(g, sizeof(S))) {
      small_inner_mma<Storage>(g, ctx);
      return;
    }
  }
  const Index row_blocks = (g.m + kThreads * kRowsPerThread - 1) / (kThreads * kRowsPerThread);
  require<DeviceError>(row_blocks <= 65535 && g.batch < (Index(1) << 31),
                       "small_inner_gemm: too many rows or products");
  const dim3 grid(unsigned(g.batch), unsigned(row_blocks));
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  const Index size = std::max(g.k, g.n);
  if (size <= 4) {
    launch_small_inner_gemm<S, 4>(g, grid, stream);
  } else if (size <= 8) {
    launch_small_inner_gemm<S, 8>(g, grid, stream);
  } else if (size <= 16) {
    launch_small_inner_gemm<S, 16>(g, grid, stream);
  } else {
    launch_small_inner_gemm<S, 32>(g, grid, stream);
  }
  check_launch("small_inner_gemm");
}

// The first dimension (of more than one value) with stride 1, or -1.
int unit_stride_dim(const StridedCopy& c, const Index (&strides)[4]) {
  for (int k = 3; k >= 0; --k)
    if (strides[k] == 1 && c.dims[k] > 1) return k;
  return -1;
}

// Whether a copy's blocks can start on 16-byte vectors: both base addresses aligned, and each
// of the `count` dimensions in `dims` (those the threads do not walk) steps whole vectors on
// both sides.
template <class S>
bool steps_in_vectors(const StridedCopy& c, const int* dims, int count) {
  constexpr Index V = Index(16 / sizeof(S));
  if (reinterpret_cast<std::uintptr_t>(c.src) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(c.dst) % 16 != 0)
    return false;
  for (int k = 0; k < count; ++k) {
    const int dim = dims[k];
    if (c.dims[dim] != 1 && (c.src_strides[dim] % V != 0 || c.dst_strides[dim] % V != 0))
      return false;
  }
  return true;
}

// The transpose kernels' groups for a transpose with axes.inner and axes.across set: a side
// of fewer than 32 values takes the outer dimension that continues it contiguously (src
// stride n_in after inner, dst stride n_across after across), whose size becomes 1 in `c`.
TransposeGroups transpose_groups(StridedCopy& c, const CopyAxes& axes) {
  TransposeGroups groups;
  const Index n_in = c.dims[axes.inner], n_across = c.dims[axes.across];
  constexpr Index kMaxGrouped = Index(1) << 31;  // (grouped_offset's 32-bit division)
  for (const int dim : {axes.outer[0], axes.outer[1]}) {
    if (c.dims[dim] == 1 || c.dims[dim] * 32 >= kMaxGrouped) continue;
    if (n_in < 32 && groups.in == 1 && c.src_strides[dim] == n_in) {
      groups.in = c.dims[dim], groups.in_dst_stride = c.dst_strides[dim];
      c.dims[dim] = 1;
    } else if (n_across < 32 && groups.across == 1 && c.dst_strides[dim] == n_across) {
      groups.across = c.dims[dim], groups.across_src_stride = c.src_strides[dim];
      c.dims[dim] = 1;
    }
  }
  return groups;
}

template <class Storage>
void strided_copy(const StridedCopy& c, Context& ctx) {
  const Index total = c.dims[0] * c.dims[1] * c.dims[2] * c.dims[3];
  if (total == 0) return;
  using S = DeviceScalar<Storage>;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  const int src_unit = unit_stride_dim(c, c.src_strides),
            dst_unit = unit_stride_dim(c, c.dst_strides);
  CopyAxes axes{};
  auto set_outer = [&](int skip1, int skip2) {  // the dimensions left, in order
    int n = 0;
    for (int k = 0; k < 4; ++k)
      if (k != skip1 && k != skip2) axes.outer[n++] = k;
  };
  if (src_unit >= 0 && dst_unit >= 0 && src_unit != dst_unit) {
    axes.inner = src_unit, axes.across = dst_unit;
    set_outer(src_unit, dst_unit);
    // A side of fewer than 32 values continued by an outer dimension: that dimension joins
    // the side (transpose_groups).
    StridedCopy grouped = c;
    const TransposeGroups groups = transpose_groups(grouped, axes);
    const Index all_in = c.dims[src_unit] * groups.in,
                all_across = c.dims[dst_unit] * groups.across;
    const Index outer = grouped.dims[axes.outer[0]] * grouped.dims[axes.outer[1]];
    // Both sides in whole 16-byte vectors, every row (of a group too) and base aligned: a warp
    // per tile of vectors.
    constexpr Index V = Index(16 / sizeof(S));
    // (Packed src rows: each tile starts a multiple of tile.across rows in, whole vectors.)
    const bool packed_rows =
        groups.in == 1 && groups.across == 1 && c.src_strides[dst_unit] == c.dims[src_unit];
    const VectorTile tile = vector_tile<S>(all_in, all_across, packed_rows);
    const bool vectors = tile.in > 0 && (c.src_strides[dst_unit] % V == 0 || tile.packed) &&
                         groups.across_src_stride % V == 0 && c.dst_strides[src_unit] % V == 0 &&
                         groups.in_dst_stride % V == 0 &&
                         steps_in_vectors<S>(grouped, axes.outer, 2);
    if (vectors) {
      const Index tiles =
          (all_in + tile.in - 1) / tile.in * ((all_across + tile.across - 1) / tile.across) * outer;
      const Index blocks = std::min<Index>((tiles + 7) / 8, Index(1) << 30);
      vector_transpose_kernel<S>
          <<<unsigned(blocks), 256, 0, stream>>>(grouped, axes, groups, tile, tiles);
      check_launch("strided_copy");
      return;
    }
    const Index blocks = (all_in + 31) / 32 * ((all_across + 31) / 32) * outer;
    require<DeviceError>(blocks < (Index(1) << 31), "strided copy: too many tiles");
    strided_transpose_kernel<S>
        <<<unsigned(blocks), dim3(32, kRows), 0, stream>>>(grouped, axes, groups);
  } else {
    axes.inner = dst_unit >= 0 ? dst_unit : (src_unit >= 0 ? src_unit : 3);
    set_outer(axes.inner, axes.inner);
    const Index rows = total / c.dims[axes.inner], n = c.dims[axes.inner];
    // Whole 16-byte vectors on both sides: unit strides along the run, every run's start and
    // both base addresses aligned.
    constexpr Index V = Index(16 / sizeof(S));
    const bool vectors = src_unit == axes.inner && dst_unit == axes.inner && n % V == 0 &&
                         steps_in_vectors<S>(c, axes.outer, 3);
    // `lanes` threads per run (up to a warp, fewer where a run has fewer units), 256 per block;
    // one unit (value or vector) per thread, unless the runs need more than the grid's 65535
    // rows of chunks.
    // (The value kernel's blocks are 32 x kRows.)
    const Index unit = vectors ? V : 1;
    int lanes = 32;
    while (vectors && lanes > 1 && (lanes / 2) * unit >= n)
      lanes /= 2;
    const int runs_per_block = 256 / lanes;
    const Index blocks = (rows + runs_per_block - 1) / runs_per_block;
    require<DeviceError>(blocks < (Index(1) << 31), "strided copy: too many rows");
    constexpr Index kMaxChunks = 65535;
    const Index step = lanes * unit;  // values a block's threads of one run take at a time
    const Index chunk =
        std::max<Index>(step, (n + step * kMaxChunks - 1) / (step * kMaxChunks) * step);
    const dim3 grid(unsigned(blocks), unsigned((n + chunk - 1) / chunk));
    if (vectors) {
      strided_vector_runs_kernel<S>
          <<<grid, dim3(lanes, runs_per_block), 0, stream>>>(c, axes, rows, chunk);
    } else {
      strided_runs_kernel<S><<<grid, dim3(32, kRows), 0, stream>>>(c, axes, rows, chunk);
    }
  }
  check_launch("strided_copy");
}

template void strided_copy<float>(const StridedCopy&, Context&);
template void strided_copy<double>(const StridedCopy&, Context&);
template void strided_copy<half>(const StridedCopy&, Context&);
template void strided_copy<bfloat16>(const StridedCopy&, Context&);
template void small_inner_gemm<float>(const SmallInnerGemm&, Context&);
template void small_inner_gemm<double>(const SmallInnerGemm&, Context&);
template void small_inner_gemm<half>(const SmallInnerGemm&, Context&);
template void small_inner_gemm<bfloat16>(const SmallInnerGemm&, Context&);

}  // namespace strop::detail
