// The Walsh-Hadamard transform on tensor cores, for contiguous half and bfloat16 signals of
// n = 2^k (256 ... 32768) or n = m 2^k (m = 12, 20, 28; 128 <= 2^k <= 2048) values. The
// general kernel (hadamard_kernel.cu) computes in fp32 on CUDA cores and is bound by its
// instruction count, not by memory; here each value costs a few instructions.
//
// Chunks. A warp transforms a chunk of 256 consecutive values with four mma.m16n8k16. Lane
// l = 4 g + t loads values 8 l ... 8 l + 7 (one 16-byte load); value 8 l + r, r = r0 + 2 r1 +
// 4 r2, is entry (k = 2 t + r0 + 8 r1, column g + 8 r2) of the B fragments of two products.
// So the fragments' k digit is bits (0, 3, 4, 1) of the index and their column digit bits
// (5, 6, 7, 2). The first two products (A = H_16) transform the k bits. Their fp32
// accumulators, in the C layout, are the B fragments of the transpose (once rounded to 16
// bits), whose k digit is the other four bits: the second two products transform those and
// leave every value in the lane and register position it was loaded from (r = c0 c1 d0 d1
// c2 c3 d2 d3 of the two products). No shuffle, no shared memory. A is H_16 / 4, exact in
// 16 bits, so values keep their size between products.
//
// Above 8 bits:
// - a piece (up to 2048 values, 8 chunks) sits in one warp's registers: the bits above 8 are
//   radix-2 butterflies in fp32 between a lane's chunks;
// - signals with a top digit (the bits above 11 of n = 2^k, or the digit of m) take one
//   thread block each, staged in shared memory in 16 bits. The signal is copied in with
//   cp.async (all of its loads in flight at once). Pass one, in place, has each thread take
//   a run of adjacent values in every row of the top digit and transform the top digit in
//   fp32 registers; pass two transforms the pieces (one per row of the top digit) and
//   writes Y. Rows of 128 values (m 2^7) pair up into
//   chunks whose second pair of products leaves the row bit (index bit 7) alone.
// X is read once and Y written once, with 16-byte accesses in pass two and in the kernel
// without a top digit.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operators/transforms/hadamard_mma.hpp"
#include "operators/transforms/hadamard_odd_digit.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "runtime/mma16.cuh"

namespace strop::detail {
namespace {

constexpr int kChunkBits = 8;   // a chunk: 256 values, four products per warp
constexpr int kPieceBits = 11;  // a piece: at most 8 chunks in one warp's registers
// The kernel without top digit: chunks per warp, at most (more loads in flight per warp),
// and how many blocks per multiprocessor make it take fewer (small batches).
constexpr int kMostWarpChunks = 8;
constexpr int kBlocksPerMultiprocessor = 4;
constexpr int kThreads = 128;  // per block
constexpr int kWarps = kThreads / 32;

struct MmaArgs {
  const void* x;
  void* y;
  Index x_cs, y_cs;  // signal (column) strides, in values
  Index batch;
  float out_scale;  // alpha times what the stages' scaling left out
  float beta;
  bool transposed;  // H_m^T
};

// This lane's A fragment (row layout: rows g, g + 8, columns 2t, 2t + 1, +8) of H_16 / 4
// restricted to the bits of `mask`: entry (row, col) is zero where row and col differ
// outside the mask, else +-1/4. mask = 15: H_16 / 4; mask = 11: the k digit's bit 2 is left
// alone (H_8 ⊗ I_2 / 4 up to the order of the bits).
template <class S>
__device__ __forceinline__ void hadamard_fragment(uint32_t (&a)[4], int mask) {
  const int g = int(threadIdx.x % 32) / 4, t = int(threadIdx.x % 4);
  auto entry = [mask](int row, int col) {
    if ((row ^ col) & ~mask) return 0.0f;
    return (__popc(row & col & mask) & 1) ? -0.25f : 0.25f;
  };
  auto pair = [&](int row, int col) { return pack(S{}, entry(row, col), entry(row, col + 1)); };
  a[0] = pair(g, 2 * t);
  a[1] = pair(g + 8, 2 * t);
  a[2] = pair(g, 2 * t + 8);
  a[3] = pair(g + 8, 2 * t + 8);
}

// The A fragments of a chunk's two pairs of products: the first transforms bits 0, 3, 4, 1 of
// the index, the second bits 5, 6, 7, 2 (the second's mask bit 2 is index bit 7).
struct ChunkFragments {
  uint32_t first[4], second[4];
};
// Chunks of 256 values (every bit transformed), or of two rows of 128 (bit 7 left alone).
template <class S>
__device__ __forceinline__ ChunkFragments chunk_fragments(bool two_rows) {
  ChunkFragments f;
  hadamard_fragment<S>(f.first, 15);
  hadamard_fragment<S>(f.second, two_rows ? 11 : 15);
  return f;
}

// v = (H_256 / 16) of the chunk whose values 8 l ... 8 l + 7 this lane holds in q (or
// H_128 / 16 of each of its two rows), in fp32 and in the same positions.
template <class S>
__device__ __forceinline__ void transform_chunk(const ChunkFragments& h, const uint4& q,
                                                float (&v)[8]) {
  float a[4], b[4], c[4], d[4];
  mma(S{}, a, h.first, q.x, q.y);
  mma(S{}, b, h.first, q.z, q.w);
  mma(S{}, c, h.second, pack(S{}, a[0], a[1]), pack(S{}, b[0], b[1]));
  mma(S{}, d, h.second, pack(S{}, a[2], a[3]), pack(S{}, b[2], b[3]));
  v[0] = c[0], v[1] = c[1], v[2] = d[0], v[3] = d[1];
  v[4] = c[2], v[5] = c[3], v[6] = d[2], v[7] = d[3];
}

// The G chunks of q, each by transform_chunk, then radix-2 butterflies between chunks on
// the low CrossBits bits of the chunk index (G is a multiple of 2^CrossBits).
template <class S, int G, int CrossBits>
__device__ __forceinline__ void transform_chunks(const ChunkFragments& h, const uint4 (&q)[G],
                                                 float (&v)[G][8]) {
#pragma unroll
  for (int c = 0; c < G; ++c)
    transform_chunk<S>(h, q[c], v[c]);
#pragma unroll
  for (int bit = 1; bit < (1 << CrossBits); bit *= 2) {
#pragma unroll
    for (int c = 0; c < G; ++c) {
      if (c & bit) continue;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float p = v[c][i], r = v[c + bit][i];
        v[c][i] = p + r;
        v[c + bit][i] = p - r;
      }
    }
  }
}

// y[0..7] = out_scale v + beta y[0..7] (y 16-byte aligned).
template <class S>
__device__ __forceinline__ void store_eight(const MmaArgs& a, S* y, const float (&v)[8]) {
  float w[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    w[i] = a.out_scale * v[i];
  if (a.beta != 0.0f) {
    const uint4 old = *reinterpret_cast<const uint4*>(y);
    const uint32_t words[4] = {old.x, old.y, old.z, old.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 pair = unpack(S{}, words[i]);
      w[2 * i] += a.beta * pair.x;
      w[2 * i + 1] += a.beta * pair.y;
    }
  }
  *reinterpret_cast<uint4*>(y) = make_uint4(pack(S{}, w[0], w[1]), pack(S{}, w[2], w[3]),
                                            pack(S{}, w[4], w[5]), pack(S{}, w[6], w[7]));
}

// Signals of n = 2^K <= 2048, no top digit: each warp transforms G consecutive chunks of the
// batch (whole signals: G is a multiple of n / 256), straight from X to Y.
template <class S, int K, int G>
__global__ void __launch_bounds__(kThreads, 4) hadamard_mma_pieces(const MmaArgs a) {
  constexpr int kCross = K - kChunkBits;
  const int lane = int(threadIdx.x % 32);
  const Index first_chunk = (Index(blockIdx.x) * kWarps + Index(threadIdx.x / 32)) * Index(G);
  Index signal[G];
  int offset[G];
  uint4 q[G];
#pragma unroll
  for (int c = 0; c < G; ++c) {
    const Index chunk = first_chunk + c;
    signal[c] = chunk >> kCross;
    offset[c] = int(chunk & ((1 << kCross) - 1)) * 256 + 8 * lane;
    q[c] = signal[c] < a.batch ? *reinterpret_cast<const uint4*>(static_cast<const S*>(a.x) +
                                                                 signal[c] * a.x_cs + offset[c])
                               : make_uint4(0, 0, 0, 0);
  }
  // The A fragments after the loads (which sit behind a bounds check, so the compiler keeps
  // them in this order): their ~100 instructions overlap the loads' latency. Before the
  // loads they cost n = 256 about a microsecond (ncu: 3.8 us for 2 MB).
  const ChunkFragments h = chunk_fragments<S>(false);
  float v[G][8];
  transform_chunks<S, G, kCross>(h, q, v);
#pragma unroll
  for (int c = 0; c < G; ++c)
    if (signal[c] < a.batch)
      store_eight<S>(a, static_cast<S*>(a.y) + signal[c] * a.y_cs + offset[c], v[c]);
}

// Runs of N 16-bit values (N = 2, 4 or 8) as 32-bit words, in one load or store.
template <int N>
__device__ __forceinline__ void load_run(const void* p, uint32_t (&w)[N / 2]) {
  if constexpr (N == 8) {
    const uint4 q = *static_cast<const uint4*>(p);
    w[0] = q.x, w[1] = q.y, w[2] = q.z, w[3] = q.w;
  } else if constexpr (N == 4) {
    const uint2 q = *static_cast<const uint2*>(p);
    w[0] = q.x, w[1] = q.y;
  } else {
    w[0] = *static_cast<const uint32_t*>(p);
  }
}
template <int N>
__device__ __forceinline__ void store_run(void* p, const uint32_t (&w)[N / 2]) {
  if constexpr (N == 8) {
    *static_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  } else if constexpr (N == 4) {
    *static_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  } else {
    *static_cast<uint32_t*>(p) = w[0];
  }
}

// The top digit of a signal of M 2^K values: M > 1 (128 <= 2^K <= 2048), or M = 1 and the
// bits of K above kPieceBits. Pass two transforms groups of 2^kCross chunks: one row each,
// or with 2^K = 128 one chunk of two rows (M is even).
template <int M, int K>
struct TopDigit {
  static constexpr int kLowBits = M > 1 ? K : kPieceBits;
  static constexpr int kRowValues = 1 << kLowBits;  // one row: one piece
  static constexpr int kRows = M > 1 ? M : 1 << (K - kPieceBits);
  static constexpr int kRun = M > 1 ? 2 : std::min(8, 64 / kRows);  // values per thread and row
  // Pass one scales by this (exact) so that 16-bit values keep their size.
  static constexpr float kScale = M > 1 ? 0.25f : 1.0f / float(1 << ((K - kPieceBits) / 2));
  static constexpr int kCross = std::max(kLowBits - kChunkBits, 0);
  static constexpr int kGroupValues = 256 << kCross;
  static constexpr int kGroups = (M << K) / kGroupValues;
};

// The whole signal (`vectors` 16-byte vectors, 16-byte aligned) copied into shared memory
// with cp.async: every load of the block is in flight at once, and the copy waits for all.
__device__ __forceinline__ void copy_signal_to_shared(const void* x, uint4* shared, int vectors) {
  const auto* src = static_cast<const uint4*>(x);
  for (int i = int(threadIdx.x); i < vectors; i += kThreads) {
    const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(shared + i));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + i));
  }
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
}

// Signals with a top digit: one block per signal (see the file's header).
template <class S, int M, int K>
__global__ void __launch_bounds__(kThreads, 4) hadamard_mma_signal(const MmaArgs a) {
  using Top = TopDigit<M, K>;
  constexpr int kRun = Top::kRun, kRows = Top::kRows, kRowValues = Top::kRowValues;
  extern __shared__ uint4 shared_signal[];
  S* tile = reinterpret_cast<S*>(shared_signal);
  const Index signal = blockIdx.x;
  copy_signal_to_shared(static_cast<const S*>(a.x) + signal * a.x_cs, shared_signal, (M << K) / 8);
  // Pass one, in place in shared memory: each unit (a run of kRun values in every row) is
  // read, transformed on the top digit and written back where it was.
  for (int u = int(threadIdx.x); u < kRowValues / kRun; u += kThreads) {
    float v[kRows][kRun];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      uint32_t w[kRun / 2];
      load_run<kRun>(tile + r * kRowValues + u * kRun, w);
#pragma unroll
      for (int i = 0; i < kRun / 2; ++i) {
        const float2 pair = unpack(S{}, w[i]);
        v[r][2 * i] = pair.x;
        v[r][2 * i + 1] = pair.y;
      }
    }
    float top[kRun][kRows];  // transformed, column by column
#pragma unroll
    for (int j = 0; j < kRun; ++j) {
      float column[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        column[r] = v[r][j];
      if constexpr (M > 1) {
        multiply_odd_digit<M>(a.transposed, column, top[j]);
      } else {
#pragma unroll
        for (int bit = 1; bit < kRows; bit *= 2) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            if (r & bit) continue;
            const float p = column[r], s = column[r + bit];
            column[r] = p + s;
            column[r + bit] = p - s;
          }
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          top[j][r] = column[r];
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      uint32_t w[kRun / 2];
#pragma unroll
      for (int i = 0; i < kRun / 2; ++i)
        w[i] = pack(S{}, Top::kScale * top[2 * i][r], Top::kScale * top[2 * i + 1][r]);
      store_run<kRun>(tile + r * kRowValues + u * kRun, w);
    }
  }
  __syncthreads();

  constexpr int kCross = Top::kCross, kGroupChunks = 1 << kCross;
  const ChunkFragments h = chunk_fragments<S>(kRowValues < 256);
  const int lane = int(threadIdx.x % 32);
  S* y = static_cast<S*>(a.y) + signal * a.y_cs;
  for (int group = int(threadIdx.x / 32); group < Top::kGroups; group += kWarps) {
    const int first = group * Top::kGroupValues + 8 * lane;
    uint4 q[kGroupChunks];
#pragma unroll
    for (int c = 0; c < kGroupChunks; ++c)
      q[c] = *reinterpret_cast<const uint4*>(tile + first + c * 256);
    float v[kGroupChunks][8];
    transform_chunks<S, kGroupChunks, kCross>(h, q, v);
#pragma unroll
    for (int c = 0; c < kGroupChunks; ++c)
      store_eight<S>(a, y + first + c * 256, v[c]);
  }
}

template <class S, int M, int K>
void launch_signal_kernel(const MmaArgs& a, cudaStream_t stream) {
  const std::size_t shared = sizeof(S) * std::size_t(M) * (std::size_t(1) << K);
  auto kernel = hadamard_mma_signal<S, M, K>;
  if (shared > 48 * 1024)
    allow_dynamic_shared_memory(kernel, shared, "hadamard (tensor cores): shared memory attribute");
  kernel<<<unsigned(a.batch), kThreads, shared, stream>>>(a);
  check_launch("hadamard_mma_signal");
}

// kMostWarpChunks chunks per warp, or one signal per warp where that would leave fewer than
// kBlocksPerMultiprocessor blocks per multiprocessor.
template <class S, int K>
void launch_pieces_kernel(const MmaArgs& a, cudaStream_t stream) {
  constexpr int kSignalChunks = 1 << (K - kChunkBits);
  const Index chunks = a.batch * kSignalChunks;
  auto go = [&](auto kernel, int warp_chunks) {
    const Index per_block = Index(kWarps) * warp_chunks;
    kernel<<<unsigned((chunks + per_block - 1) / per_block), kThreads, 0, stream>>>(a);
    check_launch("hadamard_mma_pieces");
  };
  const Index most_blocks = (chunks + kWarps * kMostWarpChunks - 1) / (kWarps * kMostWarpChunks);
  if constexpr (kSignalChunks < kMostWarpChunks) {
    if (most_blocks < Index(kBlocksPerMultiprocessor) * multiprocessors())
      return go(hadamard_mma_pieces<S, K, kSignalChunks>, kSignalChunks);
  }
  go(hadamard_mma_pieces<S, K, kMostWarpChunks>, kMostWarpChunks);
}

template <class S, int M>
void launch_odd(const MmaArgs& a, int k, cudaStream_t stream) {
  switch (k) {
    case 7:
      return launch_signal_kernel<S, M, 7>(a, stream);
    case 8:
      return launch_signal_kernel<S, M, 8>(a, stream);
    case 9:
      return launch_signal_kernel<S, M, 9>(a, stream);
    case 10:
      return launch_signal_kernel<S, M, 10>(a, stream);
    default:
      return launch_signal_kernel<S, M, 11>(a, stream);
  }
}

template <class S>
void launch(const MmaArgs& a, Index m, int k, cudaStream_t stream) {
  if (m == 12) return launch_odd<S, 12>(a, k, stream);
  if (m == 20) return launch_odd<S, 20>(a, k, stream);
  if (m == 28) return launch_odd<S, 28>(a, k, stream);
  switch (k) {
    case 8:
      return launch_pieces_kernel<S, 8>(a, stream);
    case 9:
      return launch_pieces_kernel<S, 9>(a, stream);
    case 10:
      return launch_pieces_kernel<S, 10>(a, stream);
    case 11:
      return launch_pieces_kernel<S, 11>(a, stream);
    case 12:
      return launch_signal_kernel<S, 1, 12>(a, stream);
    case 13:
      return launch_signal_kernel<S, 1, 13>(a, stream);
    case 14:
      return launch_signal_kernel<S, 1, 14>(a, stream);
    default:
      return launch_signal_kernel<S, 1, 15>(a, stream);
  }
}

// Shared memory of the launch: a whole signal of 16-bit values per block, except for the
// pieces kernel (m = 1, n <= 2^kPieceBits), which keeps its chunks in registers.
std::size_t shared_bytes(const HadamardForm& form) {
  return form.m == 1 && form.log2_pow2 <= kPieceBits ? 0 : 2 * std::size_t(form.size());
}

bool sixteen_byte_runs(const void* data, Index col_stride, Index cols) {
  return (reinterpret_cast<std::uintptr_t>(data) & 15) == 0 && (cols == 1 || col_stride % 8 == 0);
}

}  // namespace

template <class Storage>
bool hadamard_mma_takes(const HadamardForm& form, ConstView<Storage> X, MatrixView<Storage> Y) {
  const int k = form.log2_pow2;
  const bool size_taken = form.m == 1 ? k >= kChunkBits && k <= 15
                                      : (form.m == 12 || form.m == 20 || form.m == 28) &&
                                            k >= kChunkBits - 1 && k <= kPieceBits;
  return size_taken && shared_bytes(form) <= shared_memory_per_block() && X.row_stride == 1 &&
         Y.row_stride == 1 && sixteen_byte_runs(X.data, X.col_stride, X.cols) &&
         sixteen_byte_runs(Y.data, Y.col_stride, Y.cols);
}

template <class Storage>
void hadamard_mma_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                        MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<DeviceError>(hadamard_mma_takes(form, X, Y),
                       "hadamard (tensor cores): the kernel does not take n = ", form.size(),
                       " with these strides or alignment");
  if (X.cols == 0) return;
  MmaArgs a{};
  a.x = X.data, a.y = Y.data;
  a.x_cs = X.col_stride, a.y_cs = Y.col_stride;
  a.batch = X.cols;
  a.beta = beta;
  a.transposed = form.transposed != (op != Op::NoTrans);
  // Every chunk is scaled by 1/16 (two products by H_16 / 4), the top digit by its kScale.
  const int k = form.log2_pow2;
  double left_out = 16.0;
  if (form.m > 1) left_out *= 4.0;
  if (form.m == 1 && k > kPieceBits) left_out *= double(1 << ((k - kPieceBits) / 2));
  a.out_scale = float(double(alpha) * form.scale * left_out);
  launch<S>(a, form.m, k, static_cast<cudaStream_t>(ctx.stream()));
}

template bool hadamard_mma_takes<half>(const HadamardForm&, ConstView<half>, MatrixView<half>);
template bool hadamard_mma_takes<bfloat16>(const HadamardForm&, ConstView<bfloat16>,
                                           MatrixView<bfloat16>);
template void hadamard_mma_apply<half>(const HadamardForm&, Op, ConstView<half>, MatrixView<half>,
                                       float, float, Context&);
template void hadamard_mma_apply<bfloat16>(const HadamardForm&, Op, ConstView<bfloat16>,
                                           MatrixView<bfloat16>, float, float, Context&);

}  // namespace strop::detail
