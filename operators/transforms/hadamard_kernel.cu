// The Walsh-Hadamard kernel: Y = alpha scale (H_m ⊗ H_{2^k}) X + beta Y (or with H_m^T) for
// the chains hadamard() builds (KSChain's HadamardForm), on float, half or bfloat16 signals
// with fp32 arithmetic. H carries no weights (all entries are +-1), so unlike the generic
// chain kernel this one reads nothing but the signals: it is bound by memory traffic.
//
// Index a signal of n = m 2^k values by its bits (the power-of-two digit) and the digit of m
// on top. H_{2^k} is a product of one radix-2 stage per bit, and stages on different bits
// commute, so the kernel runs them in passes of near-equal runs of bits (at most
// kMaxRegisterBits, or kLongRunBits in a 256-thread variant where that saves a pass): in a
// pass a thread holds the 2^s values that differ only in the pass's bits (a "unit") in
// registers and applies the s stages there; pass sizes are compile-time constants so that
// the units stay in registers. The m digit is one more pass whose units are the m values
// f + c 2^k, multiplied by H_m with signs known at compile time (plain adds and subtracts).
// A thread block holds a tile of signals (or of pieces of signals, below) in shared memory
// in fp32: the first pass reads its units from global memory, the last writes them, the
// ones between go through shared memory. So X is read once and Y written once.
//
// Tiles. With contiguous signals (ColMajor) a tile is one or more whole signals, one after
// the other; signals of up to kWarpTeamValues belong to one warp each (the warps of a block
// then synchronise on their own and overlap each other's loads and arithmetic), larger ones
// to the whole block. With batch-contiguous signals (RowMajor) a tile is 32 adjacent signals
// interleaved as in memory (consecutive threads read consecutive signals); that tile is 32
// times larger, so large n is split into launches on separate digits of the index
// ("groups": launch one transforms the low digit of every signal, launch two the high digit,
// with the digit's stride `inner`), each a full read and write of the data.
//
// Contiguous tiles are padded by one float per first-pass run, so that the per-thread runs
// of the first pass and the strided later passes are free of bank conflicts, and every unit
// is a run of constant stride in shared memory.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "operators/transforms/hadamard_device.hpp"
#include "operators/transforms/hadamard_mma.hpp"
#include "operators/transforms/hadamard_odd_digit.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

constexpr int kMaxRegisterBits = 5;
// Long runs: up to 2^7 values per thread in a kernel of at most 256 threads (255 registers),
// taken for powers of two where they save a pass through shared memory (n = 2048 ... 16384).
constexpr int kLongRunBits = 7;
constexpr int kLongRunThreads = 256;
constexpr int kMaxPasses = 8;
constexpr int kMaxThreads = 1024;
// Contiguous signals: at most this many values per tile (several small signals per block).
constexpr int kSignalFirstTileValues = 8192;
// Contiguous signals of at most this many values are each transformed by one warp.
constexpr int kWarpTeamValues = 2048;
// The most shared memory a tile of contiguous signals may take (one signal of 2^15 floats
// takes 132 KiB; 12 x 2^12 takes 198 KiB), less where the device has less (most_tile_bytes).
constexpr std::size_t kMaxTileBytes = 200 * 1024;
// Batch-contiguous tiles: 32 adjacent signals (a warp reads one row of the tile: 128 bytes of
// float, 64 of 16-bit values) of at most kBatchLastDigit values each (64 KiB of floats).
constexpr int kBatchLastVectors = 32;
constexpr int kBatchLastDigit = 512;

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
  Index inner;           // the digit's stride in rows (1 but in later batch-contiguous launches)
  Index batch;           // signals
  int len;               // values per vector: m 2^bits of this launch
  int vectors;           // vectors per tile
  int team_vectors;      // vectors per team: the threads that share them (a warp, or the block)
  bool warp_teams;       // teams are warps (synchronized with __syncwarp) or the whole block
  int pad_bits;          // contiguous signals: one float of padding per 2^pad_bits values
  bool signal_contiguous;
  bool transposed;  // H_m^T
  int passes;
  Pass pass[kMaxPasses];
  float alpha, beta;
};

// A run of values in the tile: value i at tile[first + i * stride].
struct TileRun {
  int first, stride;
};

// The run of values j0 + i d (d a power of two: a multiple of the padding period, or 1 with
// j0 a multiple of it and i below it) of vector t. Contiguous signals sit one after the
// other with one float of padding per 2^pad_bits values, which spreads the per-thread runs
// of the first pass over the banks; batch-contiguous tiles interleave their 32 vectors.
__device__ __forceinline__ TileRun tile_run(const HadamardArgs& a, int t, int j0, int d) {
  if (!a.signal_contiguous) return {j0 * kBatchLastVectors + t, d * kBatchLastVectors};
  const int first = t * a.len + j0;
  return {first + (first >> a.pad_bits), d + (d >> a.pad_bits)};
}

// The threads that work on the same vectors: a warp (small signals, so that warps move
// through their passes independently) or the whole block.
struct Team {
  int first_vector, lane, size;
};
__device__ __forceinline__ Team team_of(const HadamardArgs& a) {
  if (!a.warp_teams) return {0, int(threadIdx.x), int(blockDim.x)};
  return {int(threadIdx.x / 32) * a.team_vectors, int(threadIdx.x % 32), 32};
}
__device__ __forceinline__ void team_sync(const HadamardArgs& a) {
  if (a.warp_teams) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// Unit u of a pass with `free_count` units per vector: its vector t and free index f.
// Consecutive threads take consecutive positions in shared and in global memory.
__device__ __forceinline__ void unit_position(const HadamardArgs& a, const Team& team, int u,
                                              int free_count, int& t, int& f) {
  if (a.signal_contiguous) {
    t = u / free_count;
    f = u - t * free_count;
    t += team.first_vector;
  } else {
    f = u >> 5;  // kBatchLastVectors
    t = u & (kBatchLastVectors - 1);
  }
}

// Vector t of the block: its signal, whether it exists, its first value in X and in Y.
struct VectorAt {
  Index x = 0, y = 0;
  bool valid = false;
};
__device__ __forceinline__ VectorAt vector_at(const HadamardArgs& a, Index row0, int t) {
  const Index signal = Index(blockIdx.x) * a.vectors + t;
  return {row0 * a.x_rs + signal * a.x_cs, row0 * a.y_rs + signal * a.y_cs, signal < a.batch};
}

__device__ __forceinline__ float2 to_float2(__half2 pair) {
  return __half22float2(pair);
}
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 pair) {
  return __bfloat1622float2(pair);
}
// N contiguous values from a 16-byte aligned address (N a multiple of 16 bytes' worth).
template <int N>
__device__ __forceinline__ void load_run(const float* p, float (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; i += 4) {
    const float4 q = *reinterpret_cast<const float4*>(p + i);
    v[i] = q.x, v[i + 1] = q.y, v[i + 2] = q.z, v[i + 3] = q.w;
  }
}
template <int N, class S>
__device__ __forceinline__ void load_run(const S* p, float (&v)[N]) {
  using Pair = std::conditional_t<std::is_same_v<S, __half>, __half2, __nv_bfloat162>;
#pragma unroll
  for (int i = 0; i < N; i += 8) {
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

// The N values x[i * step] (zero for a vector past the batch).
template <class S, int N>
__device__ __forceinline__ void load_unit(const S* x, Index step, bool valid, float (&v)[N]) {
  if (!valid) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      v[i] = 0.0f;
    return;
  }
  constexpr int kVectorValues = 16 / sizeof(S);
  if constexpr (N >= kVectorValues) {
    if (step == 1 && (reinterpret_cast<std::uintptr_t>(x) & 15) == 0) return load_run<N>(x, v);
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    v[i] = load_value(x + i * step);
}

// y[i * step] = alpha v[i] + beta y[i * step] for the N values.
template <class S, int N>
__device__ __forceinline__ void store_unit(const HadamardArgs& a, S* y, Index step,
                                           const float (&v)[N]) {
  if (a.beta == 0.0f) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      store_value(y + i * step, a.alpha * v[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      store_value(y + i * step, a.alpha * v[i] + a.beta * float(load_value(y + i * step)));
  }
}

// v <- H_N v (Sylvester order).
template <int N>
__device__ __forceinline__ void butterflies(float (&v)[N]) {
#pragma unroll
  for (int h = 1; h < N; h *= 2) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (i & h) continue;
      const float p = v[i], q = v[i + h];
      v[i] = p + q;
      v[i + h] = p - q;
    }
  }
}

// One pass over 2^Bits bits starting at bit `lo`: each unit is the 2^Bits values
// j0 + i 2^lo of one vector.
template <class S, int Bits>
__device__ void power_of_two_pass(const HadamardArgs& a, Index row0, float* tile, int lo,
                                  bool first, bool last) {
  constexpr int N = 1 << Bits;
  const int d = 1 << lo;
  const int free_count = a.len >> Bits;
  const Team team = team_of(a);
  const int units = a.team_vectors * free_count;
  for (int u = team.lane; u < units; u += team.size) {
    int t, f;
    unit_position(a, team, u, free_count, t, f);
    const int j0 = (f & (d - 1)) | ((f >> lo) << (lo + Bits));
    const TileRun run = tile_run(a, t, j0, d);
    float v[N];
    const VectorAt at = first || last ? vector_at(a, row0, t) : VectorAt{};
    if (first) {
      load_unit<S, N>(static_cast<const S*>(a.x) + at.x + j0 * a.x_step, d * a.x_step, at.valid, v);
    } else {
      const float* in = tile + run.first;
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[i] = in[i * run.stride];
    }
    butterflies<N>(v);
    if (last) {
      if (at.valid)
        store_unit<S, N>(a, static_cast<S*>(a.y) + at.y + j0 * a.y_step, d * a.y_step, v);
    } else {
      float* out = tile + run.first;
#pragma unroll
      for (int i = 0; i < N; ++i)
        out[i * run.stride] = v[i];
    }
  }
}

template <class S, int MaxBits>
__device__ void power_of_two_pass(const HadamardArgs& a, Index row0, float* tile, Pass pass,
                                  bool first, bool last) {
  if constexpr (MaxBits > kMaxRegisterBits) {
    if (pass.bits == 7) return power_of_two_pass<S, 7>(a, row0, tile, pass.lo, first, last);
    if (pass.bits == 6) return power_of_two_pass<S, 6>(a, row0, tile, pass.lo, first, last);
  }
  switch (pass.bits) {
    case 0:
      return power_of_two_pass<S, 0>(a, row0, tile, pass.lo, first, last);
    case 1:
      return power_of_two_pass<S, 1>(a, row0, tile, pass.lo, first, last);
    case 2:
      return power_of_two_pass<S, 2>(a, row0, tile, pass.lo, first, last);
    case 3:
      return power_of_two_pass<S, 3>(a, row0, tile, pass.lo, first, last);
    case 4:
      return power_of_two_pass<S, 4>(a, row0, tile, pass.lo, first, last);
    default:
      return power_of_two_pass<S, kMaxRegisterBits>(a, row0, tile, pass.lo, first, last);
  }
}

template <class S, int M>
__device__ void odd_digit_pass(const HadamardArgs& a, Index row0, float* tile, bool first,
                               bool last) {
  const int free_count = a.len / M;  // 2^k: the digit's stride
  const Team team = team_of(a);
  const int units = a.team_vectors * free_count;
  for (int u = team.lane; u < units; u += team.size) {
    int t, f;
    unit_position(a, team, u, free_count, t, f);
    const TileRun run = tile_run(a, t, f, free_count);
    float v[M] = {}, w[M];
    const VectorAt at = first || last ? vector_at(a, row0, t) : VectorAt{};
    if (first) {
      if (at.valid) {
        const S* x = static_cast<const S*>(a.x) + at.x + f * a.x_step;
#pragma unroll
        for (int c = 0; c < M; ++c)
          v[c] = load_value(x + c * free_count * a.x_step);
      }
    } else {
#pragma unroll
      for (int c = 0; c < M; ++c)
        v[c] = tile[run.first + c * run.stride];
    }
    multiply_odd_digit<M>(a.transposed, v, w);
    if (last) {
      if (at.valid)
        store_unit<S, M>(a, static_cast<S*>(a.y) + at.y + f * a.y_step, free_count * a.y_step, w);
    } else {
#pragma unroll
      for (int c = 0; c < M; ++c)
        tile[run.first + c * run.stride] = w[c];
    }
  }
}

template <int MaxBits>
constexpr int kKernelThreads = MaxBits > kMaxRegisterBits ? kLongRunThreads : kMaxThreads;

template <class S, int M, int MaxBits>
__global__ void __launch_bounds__(kKernelThreads<MaxBits>) hadamard_kernel(const HadamardArgs a) {
  extern __shared__ float tile[];
  // The block's vectors start at row0: block row g of a batch-contiguous launch holds the
  // vectors of digit group g (high part above the digit, low part below it).
  const Index group = blockIdx.y, high = group / a.inner;
  const Index row0 = high * a.len * a.inner + (group - high * a.inner);
  for (int p = 0; p < a.passes; ++p) {
    const bool first = p == 0, last = p + 1 == a.passes;
    if constexpr (M > 1) {
      if (a.pass[p].bits == kOddDigit) {
        odd_digit_pass<S, M>(a, row0, tile, first, last);
        if (!last) team_sync(a);
        continue;
      }
    }
    power_of_two_pass<S, MaxBits>(a, row0, tile, a.pass[p], first, last);
    if (!last) team_sync(a);
  }
}

// ---- planning ----

// The passes over a digit m 2^bits: the power-of-two bits in near-equal runs of at most
// register_bits (larger runs first), then the digit of m.
int plan_passes(Index m, int bits, int register_bits, Pass (&pass)[kMaxPasses]) {
  int count = 0;
  const int runs = (bits + register_bits - 1) / register_bits;
  for (int r = 0, lo = 0; r < runs; ++r) {
    const int run = bits / runs + (r < bits % runs ? 1 : 0);
    pass[count++] = {lo, run};
    lo += run;
  }
  if (m > 1) pass[count++] = {0, kOddDigit};
  if (count == 0) pass[count++] = {0, 0};  // n = 1: a copy with scaling
  return count;
}

// Shared memory of a tile (none when one pass does it all in registers).
std::size_t tile_bytes(const HadamardArgs& a) {
  if (a.passes < 2) return 0;
  const std::size_t values = std::size_t(a.len) * std::size_t(a.vectors);
  const std::size_t padding = a.signal_contiguous ? (values >> a.pad_bits) + 1 : 0;
  return sizeof(float) * (values + padding);
}

std::size_t most_tile_bytes() {
  return std::min(kMaxTileBytes, shared_memory_per_block());
}

// The plan of a launch over contiguous signals of n = m 2^k values, batch B: values per
// thread (fewer when the batch is small, for enough threads), signals per tile (fewer when
// that makes too few blocks), passes.
HadamardArgs signal_first_plan(const HadamardForm& form, Index batch) {
  HadamardArgs a{};
  a.signal_contiguous = true;
  a.len = int(form.size());
  a.inner = 1;
  const int sms = multiprocessors();
  auto enough_threads = [&](int bits) {
    return double(batch) * a.len / double(1 << bits) >= 256.0 * sms;
  };
  auto runs = [&](int bits) { return (form.log2_pow2 + bits - 1) / bits; };
  int register_bits = kMaxRegisterBits;
  while (register_bits > 3 && !enough_threads(register_bits))
    --register_bits;
  if (form.m == 1 && register_bits == kMaxRegisterBits &&
      runs(kLongRunBits) < runs(kMaxRegisterBits) && enough_threads(kLongRunBits))
    register_bits = kLongRunBits;
  a.vectors = std::max(1, kSignalFirstTileValues / a.len);
  while (a.vectors > 1 && (batch + a.vectors - 1) / a.vectors < 2 * sms)
    a.vectors /= 2;
  // Shorter runs pad shared memory more: lengthen them if the tile would not fit.
  const std::size_t most = most_tile_bytes();
  for (;; ++register_bits) {
    a.passes = plan_passes(form.m, form.log2_pow2, register_bits, a.pass);
    a.pad_bits = a.pass[0].bits > 0 ? a.pass[0].bits : kMaxRegisterBits;
    if (register_bits >= kMaxRegisterBits || tile_bytes(a) <= most) break;
  }
  // Signals of up to kWarpTeamValues belong to one warp each (several when a pass has fewer
  // than 32 units per signal): warps then go through their passes independently, and the
  // loads of some overlap the arithmetic of others. Larger signals share the whole block.
  const int fewest_units = a.len >> std::max(0, a.pass[0].bits);
  a.warp_teams = a.len <= kWarpTeamValues;
  a.team_vectors = a.warp_teams ? std::max(1, 32 / fewest_units) : a.vectors;
  if (a.warp_teams) a.vectors = std::max(a.vectors / a.team_vectors, 1) * a.team_vectors;
  return a;
}

// How a batch-contiguous transform splits into launches: the power-of-two bits of each
// launch's digit, low digit first (the last launch also takes m), each digit at most
// kBatchLastDigit values.
std::vector<int> batch_last_split(const HadamardForm& form) {
  for (int launches = 1;; ++launches) {
    std::vector<int> bits(std::size_t(launches), form.log2_pow2 / launches);
    for (int i = 0; i < form.log2_pow2 % launches; ++i)
      ++bits[std::size_t(i)];
    if ((form.m << bits.back()) <= kBatchLastDigit && (1 << bits.front()) <= kBatchLastDigit)
      return bits;
  }
}

// The largest run of a plan (its kernel's register budget).
int longest_run(const HadamardArgs& a) {
  int bits = 0;
  for (int p = 0; p < a.passes; ++p)
    bits = std::max(bits, a.pass[p].bits);
  return bits;
}

// Threads per block: one per unit of the pass with the fewest units (the largest run).
int block_threads(const HadamardArgs& a, Index m) {
  if (a.warp_teams) return 32 * (a.vectors / a.team_vectors);
  const int most = longest_run(a) > kMaxRegisterBits ? kLongRunThreads : kMaxThreads;
  const Index values = Index(a.len) * a.vectors;
  Index fewest = values;
  for (int p = 0; p < a.passes; ++p)
    fewest = std::min(fewest, a.pass[p].bits == kOddDigit ? values / m : values >> a.pass[p].bits);
  return int(std::clamp<Index>((fewest + 31) / 32 * 32, 32, most));
}

// One launch: blocks of a.vectors signals, and `digit_groups` block rows.
template <class S>
void launch(const HadamardArgs& a, Index m, Index digit_groups, cudaStream_t stream) {
  require<DeviceError>(digit_groups <= 65535, "hadamard: ", digit_groups,
                       " digit groups exceed one launch");
  const std::size_t shared = tile_bytes(a);
  const int threads = block_threads(a, m);
  const dim3 grid(unsigned((a.batch + a.vectors - 1) / a.vectors), unsigned(digit_groups));
  auto go = [&](auto kernel) {
    if (shared > 48 * 1024)
      allow_dynamic_shared_memory(kernel, shared, "hadamard: shared memory attribute");
    kernel<<<grid, threads, shared, stream>>>(a);
    check_launch("hadamard_kernel");
  };
  // Long runs only for powers of two (fewer kernels to compile).
  if (longest_run(a) > kMaxRegisterBits) return go(hadamard_kernel<S, 1, kLongRunBits>);
  switch (m) {
    case 1:
      return go(hadamard_kernel<S, 1, kMaxRegisterBits>);
    case 12:
      return go(hadamard_kernel<S, 12, kMaxRegisterBits>);
    case 20:
      return go(hadamard_kernel<S, 20, kMaxRegisterBits>);
    case 28:
      return go(hadamard_kernel<S, 28, kMaxRegisterBits>);
    default:
      throw DeviceError(concat("hadamard: no kernel for H_", m));
  }
}

}  // namespace

bool hadamard_device_supported(const HadamardForm& form, Index row_stride, Index col_stride) {
  if (form.m != 1 && form.m != 12 && form.m != 20 && form.m != 28) return false;
  if (form.size() > Index(1) << 24) return false;
  if (row_stride == 1) {
    HadamardArgs a{};
    a.signal_contiguous = true;
    a.len = int(form.size());
    a.vectors = 1;
    a.passes = plan_passes(form.m, form.log2_pow2, kMaxRegisterBits, a.pass);  // least padding
    a.pad_bits = a.pass[0].bits > 0 ? a.pass[0].bits : kMaxRegisterBits;
    return tile_bytes(a) <= most_tile_bytes();
  }
  return col_stride == 1;  // any size, in enough launches
}

template <class Storage>
void hadamard_cuda_core_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                              MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  using S = DeviceScalar<Storage>;
  require<DeviceError>(hadamard_device_supported(form, X.row_stride, X.col_stride),
                       "hadamard: the GPU kernel does not take n = ", form.size(),
                       " with strides (", X.row_stride, ", ", X.col_stride, ")");
  if (X.cols == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  const bool transposed = form.transposed != (op != Op::NoTrans);

  if (X.row_stride == 1) {  // contiguous signals: one launch, whole signals per tile
    HadamardArgs a = signal_first_plan(form, X.cols);
    a.x = X.data, a.y = Y.data;
    a.x_rs = X.row_stride, a.x_cs = X.col_stride, a.y_rs = Y.row_stride, a.y_cs = Y.col_stride;
    a.x_step = a.x_rs, a.y_step = a.y_rs;
    a.batch = X.cols;
    a.transposed = transposed;
    a.alpha = alpha * float(form.scale), a.beta = beta;
    return launch<S>(a, form.m, 1, stream);
  }

  // Batch-contiguous signals: one launch per digit, low digit first. Without beta the
  // intermediate results live in Y; with beta, in a temporary (Y's old values are needed
  // by the last launch).
  const std::vector<int> split = batch_last_split(form);
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
  for (std::size_t l = 0; l < split.size(); ++l) {
    const bool final_launch = l + 1 == split.size();
    const Index m = final_launch ? form.m : 1;
    const MatrixView<Storage> out = final_launch ? Y : middle;
    HadamardArgs a{};
    a.signal_contiguous = false;
    a.len = int(m << split[l]);
    a.vectors = a.team_vectors = kBatchLastVectors;
    a.passes = plan_passes(m, split[l], kMaxRegisterBits, a.pass);
    a.x = in.data, a.y = out.data;
    a.x_rs = in.row_stride, a.x_cs = in.col_stride, a.y_rs = out.row_stride,
    a.y_cs = out.col_stride;
    a.inner = inner;
    a.x_step = inner * a.x_rs, a.y_step = inner * a.y_rs;
    a.batch = X.cols;
    a.transposed = transposed;
    a.alpha = final_launch ? alpha * float(final_scale) : float(1.0 / std::sqrt(double(a.len)));
    a.beta = final_launch ? beta : 0.0f;
    launch<S>(a, m, form.size() / a.len, stream);
    in = out;
    inner *= a.len;
  }
}

// Contiguous half/bfloat16 signals go to the tensor-core kernel where it takes them: it
// measured 0.91-1.08x the memcpy time for n = 256 ... 32768 against 1.21-1.75x for this one
// (H100, bench/NOTES-transforms.md).
template <class Storage>
bool hadamard_device_takes(const HadamardForm& form, ConstView<Storage> X, MatrixView<Storage> Y) {
  if constexpr (!std::is_same_v<Storage, float>) {
    if (hadamard_mma_takes(form, X, Y)) return true;
  }
  return hadamard_device_supported(form, X.row_stride, X.col_stride);
}

template <class Storage>
void hadamard_device_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                           MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  if constexpr (!std::is_same_v<Storage, float>) {
    if (hadamard_mma_takes(form, X, Y)) return hadamard_mma_apply(form, op, X, Y, alpha, beta, ctx);
  }
  hadamard_cuda_core_apply(form, op, X, Y, alpha, beta, ctx);
}

#define STROP_HADAMARD_DEVICE(T)                                                                  \
  template bool hadamard_device_takes<T>(const HadamardForm&, ConstView<T>, MatrixView<T>);       \
  template void hadamard_cuda_core_apply<T>(const HadamardForm&, Op, ConstView<T>, MatrixView<T>, \
                                            float, float, Context&);                              \
  template void hadamard_device_apply<T>(const HadamardForm&, Op, ConstView<T>, MatrixView<T>,    \
                                         float, float, Context&);
STROP_HADAMARD_DEVICE(float)
STROP_HADAMARD_DEVICE(half)
STROP_HADAMARD_DEVICE(bfloat16)
#undef STROP_HADAMARD_DEVICE

}  // namespace strop::detail
