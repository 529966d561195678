// The Walsh-Hadamard kernel: Y = alpha scale (H_m ⊗ H_{2^k}) X + beta Y (or with H_m^T) for
// the chains hadamard() builds (KSChain's HadamardForm), on float, half or bfloat16 signals
// with fp32 arithmetic. H carries no weights (all entries are +-1), so unlike the generic
// chain kernel this one reads nothing but the signals: it is bound by memory traffic.
//
// Index a signal of n = m 2^k values by its bits (the power-of-two digit) and the digit of m
// on top. H_{2^k} is a product of one radix-2 stage per bit, and stages on different bits
// commute, so the kernel runs them in passes of up to kRegisterBits bits: in a pass a thread
// holds the 2^s values that differ only in the pass's bits (a "unit") in registers and
// applies the s stages there. The m digit is one more pass whose units are the m values
// f + c 2^k, multiplied by H_m with signs known at compile time (plain adds and subtracts).
// A thread block holds a tile of signals (or of pieces of signals, below) in shared memory
// in fp32: the first pass reads its units from global memory, the last writes them, the
// ones between go through shared memory. So X is read once and Y written once.
//
// Tiles. With contiguous signals (ColMajor) a tile is one or more whole signals, one after
// the other. With batch-contiguous signals (RowMajor) a tile is a group of adjacent signals
// interleaved as in memory (consecutive threads read consecutive signals); that tile is V
// times larger, so large n is split into launches on separate digits of the index
// ("groups": launch one transforms the low digit of every signal, launch two the high digit,
// with the digit's stride `inner`), each a full read and write of the data.
//
// Shared memory is padded by one float per 32 so that the strided passes and the
// per-thread runs of the first pass are free of bank conflicts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "operators/transforms/hadamard_device.hpp"
#include "operators/transforms/hadamard_signs.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

constexpr int kRegisterBits = 5;
constexpr int kRegisterValues = 1 << kRegisterBits;
constexpr int kMaxPasses = 8;
constexpr int kMaxThreads = 1024;
// Contiguous signals: at least this many values per tile (several small signals per block).
constexpr int kSignalFirstTileValues = 8192;
// The most shared memory a tile of contiguous signals may take (one signal of 2^15 floats
// takes 132 KiB; 12 x 2^12 takes 198 KiB).
constexpr std::size_t kMaxTileBytes = 200 * 1024;
// Batch-contiguous tiles: at most this many values (64 KiB), at least 32 bytes of adjacent
// signals per row (one memory sector), at most 32 signals.
constexpr int kBatchLastTileValues = 16384;
constexpr int kMaxBatchLastVectors = 32;

struct Pass {
  int lo = 0;    // first bit of the power-of-two digit
  int bits = 0;  // number of bits; kOddDigit for the digit of m
};
constexpr int kOddDigit = -1;

struct HadamardArgs {
  const void* x;
  void* y;
  Index x_rs, x_cs, y_rs, y_cs;
  Index x_step, y_step;  // memory distance between consecutive values of a vector
  Index batch;           // signals
  Index groups, inner;   // vectors per signal; stride (in rows) of the transformed digit
  int len;               // values per vector: m 2^bits of this launch
  int vectors;           // vectors per tile
  bool signal_contiguous;
  bool transposed;  // H_m^T
  int passes;
  Pass pass[kMaxPasses];
  float alpha, beta;
};

__device__ __forceinline__ int padded(int i) {
  return i + (i >> 5);
}

__device__ __forceinline__ int tile_index(const HadamardArgs& a, int t, int j) {
  return padded(a.signal_contiguous ? t * a.len + j : j * a.vectors + t);
}

// Unit u of a pass with `free_count` units per vector: its vector t and free index f.
// Consecutive threads take consecutive positions in shared memory (and in global memory).
__device__ __forceinline__ void unit_position(const HadamardArgs& a, int u, int free_count, int& t,
                                              int& f) {
  if (a.signal_contiguous) {
    t = u / free_count;
    f = u - t * free_count;
  } else {
    f = u / a.vectors;
    t = u - f * a.vectors;
  }
}

struct VectorAt {
  Index x = 0, y = 0;  // offsets of the vector's first value
  bool valid = false;  // false for the signals past the batch in the last tile
};

__device__ VectorAt vector_at(const HadamardArgs& a, int t) {
  Index signal, group;
  if (a.signal_contiguous) {
    const Index v = Index(blockIdx.x) * a.vectors + t;
    signal = v / a.groups;
    group = v - signal * a.groups;
  } else {
    signal = Index(blockIdx.x) * a.vectors + t;
    group = blockIdx.y;
  }
  const Index high = group / a.inner;
  const Index row = high * a.len * a.inner + (group - high * a.inner);
  return {row * a.x_rs + signal * a.x_cs, row * a.y_rs + signal * a.y_cs, signal < a.batch};
}

// 32 contiguous values from a 16-byte aligned address.
__device__ __forceinline__ void load_run(const float* p, float (&v)[kRegisterValues]) {
#pragma unroll
  for (int i = 0; i < kRegisterValues; i += 4) {
    const float4 q = *reinterpret_cast<const float4*>(p + i);
    v[i] = q.x, v[i + 1] = q.y, v[i + 2] = q.z, v[i + 3] = q.w;
  }
}
__device__ __forceinline__ float2 to_float2(__half2 pair) {
  return __half22float2(pair);
}
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 pair) {
  return __bfloat1622float2(pair);
}
template <class S>
__device__ __forceinline__ void load_run(const S* p, float (&v)[kRegisterValues]) {
  using Pair = std::conditional_t<std::is_same_v<S, __half>, __half2, __nv_bfloat162>;
#pragma unroll
  for (int i = 0; i < kRegisterValues; i += 8) {
    const uint4 q = *reinterpret_cast<const uint4*>(p + i);
    const unsigned words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const float2 pair = to_float2(*reinterpret_cast<const Pair*>(&words[w]));
      v[i + 2 * w] = pair.x;
      v[i + 2 * w + 1] = pair.y;
    }
  }
}

// The `count` values j0 + (i << lo) of a vector (zero for a vector past the batch).
template <class S>
__device__ __forceinline__ void load_unit(const HadamardArgs& a, const VectorAt& at, int j0, int lo,
                                          int count, float (&v)[kRegisterValues]) {
  if (!at.valid) return;
  const S* x = static_cast<const S*>(a.x) + at.x;
  if (count == kRegisterValues && lo == 0 && a.x_step == 1 &&
      (reinterpret_cast<std::uintptr_t>(x + j0) & 15) == 0) {
    load_run(x + j0, v);
    return;
  }
#pragma unroll
  for (int i = 0; i < kRegisterValues; ++i)
    if (i < count) v[i] = load_value(x + Index(j0 + (i << lo)) * a.x_step);
}

// Y's value at `offset` = alpha v + beta Y.
template <class S>
__device__ __forceinline__ void store_output(const HadamardArgs& a, Index offset, float v) {
  S* y = static_cast<S*>(a.y) + offset;
  const float out = a.beta == 0.0f ? a.alpha * v : a.alpha * v + a.beta * float(load_value(y));
  store_value(y, out);
}

// v <- H_{2^bits} v on the first 2^bits values.
__device__ __forceinline__ void butterflies(int bits, float (&v)[kRegisterValues]) {
#pragma unroll
  for (int b = 0; b < kRegisterBits; ++b) {
    if (b >= bits) break;
#pragma unroll
    for (int i = 0; i < kRegisterValues; ++i) {
      if (i & (1 << b)) continue;
      const float p = v[i], q = v[i | (1 << b)];
      v[i] = p + q;
      v[i | (1 << b)] = p - q;
    }
  }
}

template <class S>
__device__ void power_of_two_pass(const HadamardArgs& a, float* tile, Pass pass, bool first,
                                  bool last) {
  const int count = 1 << pass.bits;
  const int free_count = a.len >> pass.bits;
  const int units = a.vectors * free_count;
  const int low_mask = (1 << pass.lo) - 1;
  for (int u = threadIdx.x; u < units; u += blockDim.x) {
    int t, f;
    unit_position(a, u, free_count, t, f);
    const int j0 = (f & low_mask) | ((f >> pass.lo) << (pass.lo + pass.bits));
    float v[kRegisterValues] = {};
    VectorAt at;
    if (first || last) at = vector_at(a, t);
    if (first) {
      load_unit<S>(a, at, j0, pass.lo, count, v);
    } else {
#pragma unroll
      for (int i = 0; i < kRegisterValues; ++i)
        if (i < count) v[i] = tile[tile_index(a, t, j0 + (i << pass.lo))];
    }
    butterflies(pass.bits, v);
    if (last) {
      if (!at.valid) continue;
#pragma unroll
      for (int i = 0; i < kRegisterValues; ++i)
        if (i < count) store_output<S>(a, at.y + Index(j0 + (i << pass.lo)) * a.y_step, v[i]);
    } else {
#pragma unroll
      for (int i = 0; i < kRegisterValues; ++i)
        if (i < count) tile[tile_index(a, t, j0 + (i << pass.lo))] = v[i];
    }
  }
}

// Whether (H_m or H_m^T)(R, C) = -1, as a compile-time constant.
template <int M, bool Transposed, int R, int C>
struct NegativeSign {
  static constexpr HadamardRowMasks rows = paley_row_masks(M);
  static constexpr bool value = Transposed ? (rows[C] >> R & 1) : (rows[R] >> C & 1);
};

template <int M, bool Transposed, int R, int... C>
__device__ __forceinline__ float hadamard_row(const float (&v)[M],
                                              std::integer_sequence<int, C...>) {
  return (0.0f + ... + (NegativeSign<M, Transposed, R, C>::value ? -v[C] : v[C]));
}

template <int M, bool Transposed, int... R>
__device__ __forceinline__ void multiply_small(const float (&v)[M], float (&w)[M],
                                               std::integer_sequence<int, R...>) {
  ((w[R] = hadamard_row<M, Transposed, R>(v, std::make_integer_sequence<int, M>{})), ...);
}

template <class S, int M>
__device__ void odd_digit_pass(const HadamardArgs& a, float* tile, bool first, bool last) {
  const int free_count = a.len / M;  // 2^k: the digit's stride
  const int units = a.vectors * free_count;
  for (int u = threadIdx.x; u < units; u += blockDim.x) {
    int t, f;
    unit_position(a, u, free_count, t, f);
    float v[M] = {}, w[M];
    VectorAt at;
    if (first || last) at = vector_at(a, t);
    if (first) {
      if (at.valid) {
        const S* x = static_cast<const S*>(a.x) + at.x;
#pragma unroll
        for (int c = 0; c < M; ++c)
          v[c] = load_value(x + Index(f + c * free_count) * a.x_step);
      }
    } else {
#pragma unroll
      for (int c = 0; c < M; ++c)
        v[c] = tile[tile_index(a, t, f + c * free_count)];
    }
    if (a.transposed) {
      multiply_small<M, true>(v, w, std::make_integer_sequence<int, M>{});
    } else {
      multiply_small<M, false>(v, w, std::make_integer_sequence<int, M>{});
    }
    if (last) {
      if (!at.valid) continue;
#pragma unroll
      for (int c = 0; c < M; ++c)
        store_output<S>(a, at.y + Index(f + c * free_count) * a.y_step, w[c]);
    } else {
#pragma unroll
      for (int c = 0; c < M; ++c)
        tile[tile_index(a, t, f + c * free_count)] = w[c];
    }
  }
}

template <class S, int M>
__global__ void __launch_bounds__(kMaxThreads) hadamard_kernel(const HadamardArgs a) {
  extern __shared__ float tile[];
  for (int p = 0; p < a.passes; ++p) {
    const bool first = p == 0, last = p + 1 == a.passes;
    if constexpr (M > 1) {
      if (a.pass[p].bits == kOddDigit) {
        odd_digit_pass<S, M>(a, tile, first, last);
        if (!last) __syncthreads();
        continue;
      }
    }
    power_of_two_pass<S>(a, tile, a.pass[p], first, last);
    if (!last) __syncthreads();
  }
}

// ---- planning ----

// The passes over a digit m 2^bits: power-of-two bits in runs of kRegisterBits, then m.
int plan_passes(Index m, int bits, Pass (&pass)[kMaxPasses]) {
  int count = 0;
  for (int lo = 0; lo < bits; lo += kRegisterBits)
    pass[count++] = {lo, std::min(kRegisterBits, bits - lo)};
  if (m > 1) pass[count++] = {0, kOddDigit};
  if (count == 0) pass[count++] = {0, 0};  // n = 1: a copy with scaling
  return count;
}

std::size_t tile_bytes(int len, int vectors, int passes) {
  if (passes < 2) return 0;  // registers only
  const int values = len * vectors;
  return sizeof(float) * std::size_t(values + values / 32 + 1);
}

// Batch-contiguous tiles: the number of adjacent signals per tile for a digit of `len` values.
int batch_last_vectors(int len, std::size_t storage_bytes) {
  const int least = std::max(1, int(32 / storage_bytes));
  int v = kMaxBatchLastVectors;
  while (v > least && v * len > kBatchLastTileValues)
    v /= 2;
  return v;
}

// How a batch-contiguous transform splits into launches: the power-of-two bits of each
// launch's digit, low digit first (the last launch also takes m).
std::vector<int> batch_last_split(const HadamardForm& form, std::size_t storage_bytes) {
  const int least = std::max(1, int(32 / storage_bytes));
  const Index most = kBatchLastTileValues / least;  // values per digit
  for (int launches = 1; launches <= form.log2_pow2 + 1; ++launches) {
    std::vector<int> bits(std::size_t(launches), form.log2_pow2 / launches);
    for (int i = 0; i < form.log2_pow2 % launches; ++i)
      ++bits[std::size_t(i)];
    const Index top = form.m << bits.back();
    const Index low = Index(1) << bits.front();
    if (top <= most && low <= most) return bits;
  }
  return {};
}

bool signal_first_fits(const HadamardForm& form) {
  const Index n = form.size();
  if (n > Index(1) << 20) return false;
  Pass pass[kMaxPasses];
  const int passes = plan_passes(form.m, form.log2_pow2, pass);
  return tile_bytes(int(n), 1, passes) <= kMaxTileBytes;
}

template <class S>
void launch(HadamardArgs& a, const Pass (&pass)[kMaxPasses], int passes, Index m,
            cudaStream_t stream) {
  std::copy(pass, pass + passes, a.pass);
  a.passes = passes;
  const std::size_t shared = tile_bytes(a.len, a.vectors, passes);
  const Index values = Index(a.len) * a.vectors;
  const int threads =
      int(std::clamp<Index>((values / kRegisterValues + 31) / 32 * 32, 32, kMaxThreads));
  dim3 grid;
  if (a.signal_contiguous) {
    grid = dim3(unsigned((a.batch * a.groups + a.vectors - 1) / a.vectors));
  } else {
    require<DeviceError>(a.groups <= 65535, "hadamard: too many digit groups for one launch");
    grid = dim3(unsigned((a.batch + a.vectors - 1) / a.vectors), unsigned(a.groups));
  }
  auto go = [&](auto kernel) {
    if (shared > 48 * 1024)
      check_cuda(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
          "hadamard: shared memory attribute");
    kernel<<<grid, threads, shared, stream>>>(a);
    check_launch("hadamard_kernel");
  };
  switch (m) {
    case 1:
      return go(hadamard_kernel<S, 1>);
    case 12:
      return go(hadamard_kernel<S, 12>);
    case 20:
      return go(hadamard_kernel<S, 20>);
    case 28:
      return go(hadamard_kernel<S, 28>);
    default:
      throw DeviceError(concat("hadamard: no kernel for H_", m));
  }
}

}  // namespace

bool hadamard_device_supported(const HadamardForm& form, Index row_stride, Index col_stride) {
  if (form.m != 1 && form.m != 12 && form.m != 20 && form.m != 28) return false;
  if (row_stride == 1) return signal_first_fits(form);
  return col_stride == 1;  // any size, in enough launches
}

template <class Storage>
void hadamard_device_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                           MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<DeviceError>(hadamard_device_supported(form, X.row_stride, X.col_stride),
                       "hadamard: the GPU kernel does not take n = ", form.size(),
                       " with strides (", X.row_stride, ", ", X.col_stride, ")");
  if (X.cols == 0 || form.size() == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  HadamardArgs a{};
  a.batch = X.cols;
  a.transposed = form.transposed != (op != Op::NoTrans);

  if (X.row_stride == 1) {  // contiguous signals: one launch, whole signals per tile
    Pass pass[kMaxPasses];
    const int passes = plan_passes(form.m, form.log2_pow2, pass);
    a.x = X.data, a.y = Y.data;
    a.x_rs = X.row_stride, a.x_cs = X.col_stride, a.y_rs = Y.row_stride, a.y_cs = Y.col_stride;
    a.x_step = a.x_rs, a.y_step = a.y_rs;
    a.groups = 1, a.inner = 1;
    a.len = int(form.size());
    a.vectors = std::max(1, kSignalFirstTileValues / a.len);
    a.signal_contiguous = true;
    a.alpha = alpha * float(form.scale), a.beta = beta;
    return launch<S>(a, pass, passes, form.m, stream);
  }

  // Batch-contiguous signals: one launch per digit, low digit first. Without beta the
  // intermediate results live in Y; with beta, in a temporary (Y's old values are needed
  // by the last launch).
  const std::vector<int> split = batch_last_split(form, sizeof(S));
  Buffer<S> temp;  // S: Storage is an incomplete type in CUDA sources
  MatrixView<Storage> middle = Y;
  if (split.size() > 1 && beta != 0.0f) {
    temp = Buffer<S>(Y.rows * Y.cols, MemorySpace::Device, ctx);
    middle = make_view(reinterpret_cast<Storage*>(temp.data()), Y.rows, Y.cols, Layout::RowMajor,
                       MemorySpace::Device);
  }
  // Each launch but the last scales by 1/sqrt(its size), keeping the intermediate values as
  // large as the input (no overflow in 16 bits); the last one makes up for it.
  double final_scale = form.scale;
  for (std::size_t i = 0; i + 1 < split.size(); ++i)
    final_scale *= std::sqrt(double(Index(1) << split[i]));
  ConstView<Storage> in = X;
  Index inner = 1;
  for (std::size_t launch_index = 0; launch_index < split.size(); ++launch_index) {
    const bool final_launch = launch_index + 1 == split.size();
    const Index m = final_launch ? form.m : 1;
    const MatrixView<Storage> out = final_launch ? Y : middle;
    Pass pass[kMaxPasses];
    const int passes = plan_passes(m, split[launch_index], pass);
    a.x = in.data, a.y = out.data;
    a.x_rs = in.row_stride, a.x_cs = in.col_stride, a.y_rs = out.row_stride,
    a.y_cs = out.col_stride;
    a.len = int(m << split[launch_index]);
    a.inner = inner;
    a.groups = form.size() / a.len;
    a.x_step = inner * a.x_rs, a.y_step = inner * a.y_rs;
    a.vectors = batch_last_vectors(a.len, sizeof(S));
    a.signal_contiguous = false;
    a.alpha = final_launch ? alpha * float(final_scale) : float(1.0 / std::sqrt(double(a.len)));
    a.beta = final_launch ? beta : 0.0f;
    launch<S>(a, pass, passes, m, stream);
    in = out;
    inner *= a.len;
  }
}

template void hadamard_device_apply<float>(const HadamardForm&, Op, ConstView<float>,
                                           MatrixView<float>, float, float, Context&);
template void hadamard_device_apply<half>(const HadamardForm&, Op, ConstView<half>,
                                          MatrixView<half>, float, float, Context&);
template void hadamard_device_apply<bfloat16>(const HadamardForm&, Op, ConstView<bfloat16>,
                                              MatrixView<bfloat16>, float, float, Context&);

}  // namespace strop::detail
