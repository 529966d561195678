// The Stockham FFT on the GPU, complex<float>: the stages of fft_host.cpp (see there for the
// index map), with a signal of n = 2^k values per team of n / 16 threads. Each thread holds
// 16 values in registers: a stage's butterflies are radix-16 (the first one radix 2^(k mod 4)
// when 4 does not divide k, a thread then taking several), computed in registers by radix-2
// decimation in frequency with compile-time twiddles. Between stages the values go through
// shared memory (real and imaginary parts in two arrays, one float of padding per 32 so that
// the strided writes of early stages avoid bank conflicts). The stage twiddles come from a
// table in global memory laid out per stage as [q][k] (fft_device_twiddles), so that the
// threads of a warp read consecutive entries: a table of roots indexed by k q would scatter
// each warp's reads over up to 32 cache lines (3.5x slower in the first version). The first
// stage reads X straight from global memory and the last writes Y, both coalesced: X is read
// once and Y written once, with no digit reversal pass. The inverse transform conjugates on
// the way in and out (conj(F conj(x)) = F^H x). Batch-contiguous signals (row stride > 1)
// take the same kernel: each warp's global accesses are then strided, and the blocks of
// neighbouring signals share the sectors through the L2 cache.
//
// Large signals (n = S n2 with S a power of two) are cut by one decimation-in-frequency step:
// X[k1 + S k2] = sum_j2 w_n2^(j2 k2) [w_n^(j2 k1) sum_m w_S^(m k1) x[j2 + n2 m]]. Block k1 of a
// signal forms the bracket while it loads (reading all S pieces of the signal: the S blocks
// of a signal run together, so the repeated reads hit the L2 cache), runs the n2-point FFT,
// and writes every S-th output. Each block then holds n2 values: no cluster, no distributed
// shared memory (a first version split signals over a cluster of 2 blocks exchanging
// through distributed shared memory: 3.7x the memcpy time at n = 32768).
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "operators/transforms/fft_device.hpp"
#include "runtime/cuda_check.hpp"

namespace strop::detail {
namespace {

constexpr int kValuesPerThread = 16;
constexpr int kLogValuesPerThread = 4;
constexpr int kMinBlockThreads = 256;
constexpr int kMaxBlockThreads = 1024;
constexpr int kPadBits = 5;  // one float of padding per 32
// Above this size signals are split (see the top): one block holds at most 2^14 values
// (135 KiB of shared memory).
constexpr Index kFftUnsplitMaxSize = 16384;

struct FftArgs {
  const float2* x;
  float2* y;
  Index x_rs, x_cs, y_rs, y_cs;  // strides in complex values (rows: 1 for contiguous signals)
  Index batch;
  const float2* twiddles;        // per stage after the first: [q][k] = exp(-2 pi i k q / (Ns RS))
  const float2* split_twiddles;  // [k1 - 1][j2] = exp(-2 pi i j2 k1 / n), k1 = 1 .. S - 1
  int log_n;                     // of the n2-point FFT each block runs (n2 = n / S)
  int stages;
  int signals_per_block;
  bool inverse;
  bool has_beta;
  float2 alpha, beta;
};

__device__ __forceinline__ int padded(int i) {
  return i + (i >> kPadBits);
}

__device__ __forceinline__ float2 operator+(float2 a, float2 b) {
  return {a.x + b.x, a.y + b.y};
}
__device__ __forceinline__ float2 operator-(float2 a, float2 b) {
  return {a.x - b.x, a.y - b.y};
}
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
__device__ __forceinline__ float2 conj_if(float2 a, bool c) {
  return c ? float2{a.x, -a.y} : a;
}

// cos and sin of 2 pi e / 16 (folded at compile time: e is a constant after unrolling).
__host__ __device__ constexpr float cos16(int e) {
  constexpr float c1 = 0.923879532511286756f, c2 = 0.707106781186547524f,
                  c3 = 0.382683432365089772f;
  e &= 15;
  const int quarter = e & 3;  // cos(2 pi e / 16) by the position in the quadrant
  const float magnitude = quarter == 0 ? 1.0f : quarter == 1 ? c1 : quarter == 2 ? c2 : c3;
  const float first = (e & 4) ? (quarter == 0 ? 0.0f
                                              : -(quarter == 1   ? c3
                                                  : quarter == 2 ? c2
                                                                 : c1))
                              : magnitude;  // e in [0, 8)
  return (e & 8) ? -first : first;
}
__host__ __device__ constexpr float sin16(int e) {
  return cos16(e + 12);
}  // cos(t - pi/2)

// p with its low `bits` (<= 4) bits reversed.
__host__ __device__ constexpr int bit_reverse(int p, int bits) {
  const int reversed4 = ((p & 1) << 3) | ((p & 2) << 1) | ((p & 4) >> 1) | ((p & 8) >> 3);
  return reversed4 >> (4 - bits);
}

// One level of radix-2 decimation in frequency on blocks of 2H of the RS values, then the
// next level (template recursion: a loop with h /= 2 is not unrolled, which left the twiddles
// computed at run time and tripled the kernel's instruction count).
template <int RS, int H>
__device__ __forceinline__ void dif_levels(float2* v) {
#pragma unroll
  for (int s0 = 0; s0 < RS; s0 += 2 * H) {
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const float2 a = v[s0 + i], b = v[s0 + i + H];
      v[s0 + i] = a + b;
      const float2 d = a - b;
      const int e = i * (kValuesPerThread / (2 * H));  // exp(-2 pi i e / 16)
      if (e == 0) {
        v[s0 + i + H] = d;
      } else if (e == 4) {
        v[s0 + i + H] = float2{d.y, -d.x};
      } else {
        v[s0 + i + H] = cmul(d, float2{cos16(e), -sin16(e)});
      }
    }
  }
  if constexpr (H > 1) dif_levels<RS, H / 2>(v);
}

// The forward DFT of the RS values v[0 .. RS) in place: output p ends in v[bit_reverse(p)].
template <int RS>
__device__ __forceinline__ void dft_in_registers(float2* v) {
  dif_levels<RS, RS / 2>(v);
}

// A signal's place in shared memory: real and imaginary parts in two padded arrays.
struct SharedSignal {
  float* re;
  float* im;
  __device__ __forceinline__ float2 load(int idx) const {
    return float2{re[padded(idx)], im[padded(idx)]};
  }
  __device__ __forceinline__ void store(int idx, float2 value) const {
    re[padded(idx)] = value.x;
    im[padded(idx)] = value.y;
  }
};

// value * w_4^e, w_4 = exp(-2 pi i / 4) = -i.
__device__ __forceinline__ float2 times_w4(float2 value, int e) {
  switch (e & 3) {
    case 0:
      return value;
    case 1:
      return float2{value.y, -value.x};
    case 2:
      return float2{-value.x, -value.y};
    default:
      return float2{-value.y, value.x};
  }
}

// Value idx of the n2-point signal block k1 transforms: x itself (kSplit = 1), or the
// bracket of the split (see the top).
template <int kSplit>
__device__ __forceinline__ float2 load_input(const FftArgs& a, const float2* x, int idx, int k1) {
  static_assert(kSplit == 1 || kSplit == 2 || kSplit == 4);
  float2 sum = conj_if(x[idx * a.x_rs], a.inverse);
  if constexpr (kSplit > 1) {
    const int n2 = 1 << a.log_n;
#pragma unroll
    for (int m = 1; m < kSplit; ++m) {
      const float2 piece = conj_if(x[Index(idx + m * n2) * a.x_rs], a.inverse);
      sum = sum + times_w4(piece, (4 / kSplit) * m * k1);
    }
    if (k1 > 0) sum = cmul(sum, __ldg(a.split_twiddles + (k1 - 1) * n2 + idx));
  }
  return sum;
}

// Stage loads: butterfly j = tid + b * threads (b < 16 / RS) reads src[j + q n / RS] times
// the twiddle exp(-2 pi i k q / (Ns RS)), k = j mod Ns, Ns = 2^ls; then its DFT.
template <int RS, bool kFromGlobal, int kSplit>
__device__ __forceinline__ void load_stage(float2 (&v)[kValuesPerThread], const FftArgs& a,
                                           const float2* x, const float2* twiddles,
                                           const SharedSignal& s, int tid, int threads, int ls,
                                           int k1, bool valid) {
  constexpr int kLogRS = RS == 2 ? 1 : RS == 4 ? 2 : RS == 8 ? 3 : 4;
  const int log_butterflies = a.log_n - kLogRS;
#pragma unroll
  for (int b = 0; b < kValuesPerThread / RS; ++b) {
    const int j = tid + b * threads;
    const int k = j & ((1 << ls) - 1);
#pragma unroll
    for (int q = 0; q < RS; ++q) {
      const int idx = j + (q << log_butterflies);
      float2 value;
      if constexpr (kFromGlobal) {
        value = valid ? load_input<kSplit>(a, x, idx, k1) : float2{0.0f, 0.0f};
      } else {
        value = s.load(idx);
      }
      if (q > 0 && ls > 0) value = cmul(value, __ldg(twiddles + (q << ls) + k));
      v[b * RS + q] = value;
    }
    dft_in_registers<RS>(v + b * RS);
  }
}

// Stage stores: output p of butterfly j goes to dst[(j - k) RS + k + p Ns].
template <int RS, bool kToGlobal, int kSplit>
__device__ __forceinline__ void store_stage(const float2 (&v)[kValuesPerThread], const FftArgs& a,
                                            float2* y, const SharedSignal& s, int tid, int threads,
                                            int ls, int k1, bool valid) {
  constexpr int kLogRS = RS == 2 ? 1 : RS == 4 ? 2 : RS == 8 ? 3 : 4;
#pragma unroll
  for (int b = 0; b < kValuesPerThread / RS; ++b) {
    const int j = tid + b * threads;
    const int k = j & ((1 << ls) - 1);
    const int base = ((j - k) << kLogRS) + k;
#pragma unroll
    for (int p = 0; p < RS; ++p) {
      const int idx = base + (p << ls);
      const float2 value = v[b * RS + bit_reverse(p, kLogRS)];
      if constexpr (kToGlobal) {
        if (valid) {
          const Index at = Index(idx * kSplit + k1) * a.y_rs;
          float2 out = cmul(a.alpha, conj_if(value, a.inverse));
          if (a.has_beta) out = out + cmul(a.beta, y[at]);
          y[at] = out;
        }
      } else {
        s.store(idx, value);
      }
    }
  }
}

template <int RS, int kSplit>
__device__ __forceinline__ void run_stage(float2 (&v)[kValuesPerThread], const FftArgs& a,
                                          const float2* x, float2* y, const float2* twiddles,
                                          const SharedSignal& s, int tid, int threads, int ls,
                                          int k1, bool first, bool last, bool valid) {
  if (first) {
    load_stage<RS, true, kSplit>(v, a, x, twiddles, s, tid, threads, ls, k1, valid);
  } else {
    load_stage<RS, false, kSplit>(v, a, x, twiddles, s, tid, threads, ls, k1, valid);
    __syncthreads();  // every value read before any is overwritten
  }
  if (last) {
    store_stage<RS, true, kSplit>(v, a, y, s, tid, threads, ls, k1, valid);
  } else {
    store_stage<RS, false, kSplit>(v, a, y, s, tid, threads, ls, k1, valid);
    __syncthreads();
  }
}

// kFirstRadix: the first stage's radix (2, 4, 8 or 16); the others are radix-16. kMaxThreads
// bounds the block (registers per thread: 128 at 512 threads, 85 for 256 with three blocks
// per multiprocessor). kSplit: blocks per signal (see the top).
template <int kFirstRadix, int kMaxThreads, int kSplit>
__global__ void __launch_bounds__(kMaxThreads, kMaxBlockThreads / kMaxThreads == 4 ? 3 : 1)
    fft_kernel(FftArgs a) {
  extern __shared__ float smem[];
  const int log_threads = a.log_n - kLogValuesPerThread;  // threads per signal
  const int threads = 1 << log_threads;
  const int local = kSplit == 1 ? int(threadIdx.x) >> log_threads : 0;
  const int tid = int(threadIdx.x) & (threads - 1);
  const Index signal =
      kSplit == 1 ? Index(blockIdx.x) * a.signals_per_block + local : Index(blockIdx.x / kSplit);
  const int k1 = kSplit == 1 ? 0 : int(blockIdx.x % kSplit);
  const bool valid = signal < a.batch;
  const int padded_n = padded(1 << a.log_n);
  const SharedSignal s{smem + 2 * local * padded_n, smem + (2 * local + 1) * padded_n};
  const float2* x = a.x + (valid ? signal * a.x_cs : 0);
  float2* y = a.y + (valid ? signal * a.y_cs : 0);

  float2 v[kValuesPerThread];
  constexpr int kFirstLog = kFirstRadix == 2 ? 1 : kFirstRadix == 4 ? 2 : kFirstRadix == 8 ? 3 : 4;
  run_stage<kFirstRadix, kSplit>(v, a, x, y, a.twiddles, s, tid, threads, 0, k1, true,
                                 a.stages == 1, valid);
  int ls = kFirstLog;
  const float2* twiddles = a.twiddles;
  for (int stage = 1; stage < a.stages; ++stage) {
    run_stage<kValuesPerThread, kSplit>(v, a, x, y, twiddles, s, tid, threads, ls, k1, false,
                                        stage + 1 == a.stages, valid);
    twiddles += kValuesPerThread << ls;
    ls += kLogValuesPerThread;
  }
}

int log2_exact(Index n) {
  int l = 0;
  while ((Index(1) << l) < n)
    ++l;
  return (Index(1) << l) == n ? l : -1;
}

// The split S = 2^split_log, then the stages of the n2-point FFT (n2 = 2^log_n): the first
// of radix 2^first_log, the others radix-16.
struct FftPlan {
  int split_log, log_n, first_log, stages;
};
FftPlan fft_plan(Index n) {
  FftPlan p{};
  const int log_total = log2_exact(n);
  p.split_log = 0;
  while ((n >> p.split_log) > kFftUnsplitMaxSize)
    ++p.split_log;
  p.log_n = log_total - p.split_log;
  p.first_log =
      p.log_n % kLogValuesPerThread == 0 ? kLogValuesPerThread : p.log_n % kLogValuesPerThread;
  p.stages = 1 + (p.log_n - p.first_log) / kLogValuesPerThread;
  return p;
}

// Signals per block (a split signal's block holds one piece), and the block's shared memory:
// the real and imaginary parts of its signals, padded.
int signals_per_block(const FftPlan& p) {
  const int threads = 1 << (p.log_n - kLogValuesPerThread);  // per signal
  return p.split_log > 0 ? 1 : std::max(1, kMinBlockThreads / threads);
}
std::size_t shared_bytes(const FftPlan& p) {
  const std::size_t n2 = std::size_t(1) << p.log_n;
  return sizeof(float) * 2 * std::size_t(signals_per_block(p)) * (n2 + (n2 >> kPadBits));
}

}  // namespace

Index fft_device_twiddle_count(Index n) {
  const FftPlan p = fft_plan(n);
  Index count = ((Index(1) << p.split_log) - 1) << p.log_n;
  for (int stage = 1, ls = p.first_log; stage < p.stages; ++stage, ls += kLogValuesPerThread)
    count += Index(kValuesPerThread) << ls;
  return count;
}

std::vector<std::complex<float>> fft_device_twiddles(Index n) {
  const FftPlan p = fft_plan(n);
  std::vector<std::complex<float>> table;
  table.reserve(std::size_t(fft_device_twiddle_count(n)));
  for (int stage = 1, ls = p.first_log; stage < p.stages; ++stage, ls += kLogValuesPerThread) {
    const Index ns = Index(1) << ls, size = ns * kValuesPerThread;
    for (Index q = 0; q < kValuesPerThread; ++q)
      for (Index k = 0; k < ns; ++k) {
        const double angle = -2.0 * std::numbers::pi * double(k * q % size) / double(size);
        table.emplace_back(float(std::cos(angle)), float(std::sin(angle)));
      }
  }
  const Index split = Index(1) << p.split_log, n2 = Index(1) << p.log_n;
  for (Index k1 = 1; k1 < split; ++k1)
    for (Index j2 = 0; j2 < n2; ++j2) {
      const double angle = -2.0 * std::numbers::pi * double(j2 * k1) / double(n);
      table.emplace_back(float(std::cos(angle)), float(std::sin(angle)));
    }
  return table;
}

bool fft_device_supported(Index n) {
  return n >= kValuesPerThread && n <= kFftDeviceMaxSize && log2_exact(n) >= 0 &&
         shared_bytes(fft_plan(n)) <= shared_memory_per_block();
}

void fft_device_apply(Index n, bool inverse, const std::complex<float>* twiddles,
                      ConstView<std::complex<float>> X, MatrixView<std::complex<float>> Y,
                      std::complex<float> alpha, std::complex<float> beta, Context& ctx) {
  require<DeviceError>(fft_device_supported(n), "dft: the GPU FFT does not take n = ", n);
  if (X.cols == 0) return;
  FftArgs a{};
  a.x = reinterpret_cast<const float2*>(X.data);
  a.y = reinterpret_cast<float2*>(Y.data);
  a.x_rs = X.row_stride, a.x_cs = X.col_stride, a.y_rs = Y.row_stride, a.y_cs = Y.col_stride;
  a.batch = X.cols;
  a.twiddles = reinterpret_cast<const float2*>(twiddles);
  const FftPlan plan = fft_plan(n);
  a.log_n = plan.log_n;
  a.stages = plan.stages;
  const int first_log = plan.first_log;
  a.inverse = inverse;
  a.has_beta = beta != std::complex<float>(0);
  a.alpha = float2{alpha.real(), alpha.imag()};
  a.beta = float2{beta.real(), beta.imag()};

  a.split_twiddles =
      a.twiddles + fft_device_twiddle_count(n) - (((Index(1) << plan.split_log) - 1) << plan.log_n);
  const int split = 1 << plan.split_log;
  const Index n2 = Index(1) << plan.log_n;
  const int threads = int(n2 / kValuesPerThread);  // per signal (per block of a split one)
  a.signals_per_block = signals_per_block(plan);
  const std::size_t smem = shared_bytes(plan);
  const unsigned blocks =
      unsigned((X.cols + a.signals_per_block - 1) / a.signals_per_block * split);
  const unsigned block_threads = unsigned(threads * a.signals_per_block);
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto go = [&](auto kernel) {
    allow_dynamic_shared_memory(kernel, smem, "fft kernel: shared memory attribute");
    kernel<<<blocks, block_threads, smem, stream>>>(a);
    check_launch("fft_kernel");
  };
  // n2 = 2^13 and 2^14 need 512 and 1024 threads; smaller signals take blocks of 256. Split
  // signals use the 2^14-point kernel: measured on an H100 (B = 4096), splitting 2^14 and
  // 2^15 into 2 and 4 pieces of 2^13 took 1.5x and 1.9x longer than 2^14 unsplit and 2^15 in
  // two.
  if (n2 == kFftUnsplitMaxSize) {
    if (split == 2) return go(fft_kernel<4, kMaxBlockThreads, 2>);
    return go(fft_kernel<4, kMaxBlockThreads, 1>);
  }
  if (n2 == kFftUnsplitMaxSize / 2) return go(fft_kernel<2, kMaxBlockThreads / 2, 1>);
  switch (first_log) {
    case 1:
      return go(fft_kernel<2, kMinBlockThreads, 1>);
    case 2:
      return go(fft_kernel<4, kMinBlockThreads, 1>);
    case 3:
      return go(fft_kernel<8, kMinBlockThreads, 1>);
    default:
      return go(fft_kernel<16, kMinBlockThreads, 1>);
  }
}

}  // namespace strop::detail
