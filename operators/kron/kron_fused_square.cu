// The fused pass for a run of equal square factors (G factors of P x P, P a power of two up
// to 32) on real batch-first data: FastKron's fusion, specialised so that the factors are
// applied in place and every index is a compile-time shift.
//
// A block copies TL consecutive chunks of one signal (TL * P^G contiguous features) into
// shared memory, as one flat array padded by one element every 128 bytes. Step s applies
// the factor G_{hi-s} to the digit of stride c = P^s of every chunk: the P elements
// (t*P*c + p*c + c_idx) for p < P form a "row" (t = which chunk and which higher digits,
// c_idx < c the lower digits), and row r is (t, c_idx) = (r / c, r % c). The results go
// back to the positions they were read from, so after G steps a chunk holds its outputs in
// natural digit order, which is the sliced multiply's output order J within the chunk;
// element J of chunk L is written to row J * (K / P^G) + L of the output (the rotation of
// FastKron's sliced multiply), TL consecutive chunks giving a 16-byte run per row.
//
// In place needs every read of a row before any write to it: a thread owns whole rows for
// one step (RS rows x all P outputs, or a team of P / QT lanes of one warp splits the
// outputs and waits at __syncwarp before writing). The rows of a thread are R / RS apart,
// so a warp reads 32 consecutive rows: with the padding, and c a multiple of 32 or rows of
// <= 32 contiguous elements, no two lanes share a bank. Padded addresses split as
// padded(row start) + padded(p * c) (the row start is a multiple of min(P * c, 32)), so
// the p loop reads shared memory at compile-time offsets. Per p a thread issues RS loads
// of x, QT / 4 16-byte broadcast loads of the factor and RS * QT multiply-adds.
#include <climits>

#include "operators/kron/kron_device.cuh"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cuda_check.hpp"

namespace strop::detail {
namespace {

using namespace kron_device;

constexpr int kThreads = kKronSquareThreads;

__host__ __device__ constexpr int log2_of(int v) {
  return v <= 1 ? 0 : 1 + log2_of(v / 2);
}
__host__ __device__ constexpr int power(int base, int exponent) {
  return exponent == 0 ? 1 : base * power(base, exponent - 1);
}

// 16 bytes of D.
template <class D>
struct Vector16;
template <>
struct Vector16<float> {
  using type = float4;
  static constexpr int n = 4;
};
template <>
struct Vector16<double> {
  using type = double2;
  static constexpr int n = 2;
};

template <class D>
struct SquareArgs {
  const D* g[kKronMaxFused];  // in application order (G_hi first); null: identity
  long long sq[kKronMaxFused], sp[kKronMaxFused];
  int count;  // G
  const D* x;
  long long x_bs;
  D* y;
  long long y_bs;
  long long chunks;  // K / P^G
  long long l_tiles;
  int log_chunk, log_tl;
  D alpha, beta;
  int scale, beta_zero;
  int vector_store;  // Y's rows of one signal are 16-byte aligned runs
};

// QT consecutive values of a factor row, 16 bytes at a time where aligned.
template <class D, int P, int QT>
__device__ __forceinline__ void load_factor_row(const D* f, D (&v)[QT]) {
  constexpr int n = Vector16<D>::n;
  if constexpr (QT % n == 0 && P % n == 0) {
    using V = typename Vector16<D>::type;
#pragma unroll
    for (int j = 0; j < QT / n; ++j) {
      const V w = reinterpret_cast<const V*>(f)[j];
      if constexpr (n == 4) {
        v[4 * j] = w.x;
        v[4 * j + 1] = w.y;
        v[4 * j + 2] = w.z;
        v[4 * j + 3] = w.w;
      } else {
        v[2 * j] = w.x;
        v[2 * j + 1] = w.y;
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < QT; ++j)
      v[j] = f[j];
  }
}

// Step S: the factor f ([p][q], q fastest) on the digit of stride c = P^S, in place.
template <class D, int P, int RS, int QT, int S>
__device__ __forceinline__ void square_step(D* xs, const D* f, int elements) {
  constexpr int team = P / QT;
  constexpr int c = power(P, S), log_c = S * log2_of(P);
  const int spread = (elements / P) / RS;  // rows between a thread's rows
  const int items = spread * team;         // a multiple of kThreads (host check)
  for (int i = threadIdx.x; i < items; i += kThreads) {
    const int rg = i / team, part = i % team;
    int base[RS];
#pragma unroll
    for (int k = 0; k < RS; ++k) {
      const int r = rg + k * spread;
      base[k] = padded<D>(((r >> log_c) * P << log_c) + (r & (c - 1)));
    }
    D acc[RS][QT];
#pragma unroll
    for (int k = 0; k < RS; ++k)
#pragma unroll
      for (int j = 0; j < QT; ++j)
        acc[k][j] = D{};
    const D* fq = f + part * QT;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      D xv[RS];
#pragma unroll
      for (int k = 0; k < RS; ++k)
        xv[k] = xs[base[k] + padded<D>(p * c)];
      D fv[QT];
      load_factor_row<D, P, QT>(fq + p * P, fv);
#pragma unroll
      for (int j = 0; j < QT; ++j)
#pragma unroll
        for (int k = 0; k < RS; ++k)
          acc[k][j] = fma(fv[j], xv[k], acc[k][j]);
    }
    if constexpr (team > 1) __syncwarp();
#pragma unroll
    for (int k = 0; k < RS; ++k)
#pragma unroll
      for (int j = 0; j < QT; ++j)
        xs[base[k] + padded<D>((part * QT + j) * c)] = acc[k][j];
  }
}

// Steps S, S + 1, ... < count (each chunk is at most kKronSquareMaxChunk, which bounds S).
template <class D, int P, int RS, int QT, int S>
__device__ __forceinline__ void square_steps(D* xs, const D* fs, int count, int elements) {
  if constexpr (power(P, S + 1) <= kKronSquareMaxChunk) {
    if (S < count) {
      square_step<D, P, RS, QT, S>(xs, fs + S * P * P, elements);
      __syncthreads();
      square_steps<D, P, RS, QT, S + 1>(xs, fs, count, elements);
    }
  }
}

template <class D>
__device__ __forceinline__ D scaled(D v, const D* y, const SquareArgs<D>& a) {
  if (!a.scale) return v;
  return a.beta_zero ? a.alpha * v : a.alpha * v + a.beta * *y;
}

template <class D, int P, int RS, int QT>
__global__ void __launch_bounds__(kThreads) kron_square_kernel(const SquareArgs<D> a) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* fs = reinterpret_cast<D*>(shared_raw);  // the factors, [step][p][q]
  D* xs = fs + a.count * P * P;              // the block's chunks (16-byte aligned: P >= 2)
  const int tid = threadIdx.x;
  const long long lt = blockIdx.x % a.l_tiles, b = blockIdx.x / a.l_tiles;
  const int chunk = 1 << a.log_chunk;
  const int elements = chunk << a.log_tl;
  const long long L0 = lt << a.log_tl;

  const D* xb = a.x + b * a.x_bs + L0 * chunk;
  for (int e = tid; e < elements; e += kThreads)
    copy_async(xs + padded<D>(e), xb + e);
  __pipeline_commit();
  for (int e = tid; e < a.count * P * P; e += kThreads) {
    const int s = e / (P * P), p = (e / P) % P, q = e % P;
    fs[e] = factor_value(a.g[s], a.sq[s], a.sp[s], 0, q, p);
  }
  __pipeline_wait_prior(0);
  __syncthreads();

  square_steps<D, P, RS, QT, 0>(xs, fs, a.count, elements);

  // Output J of chunk L0 + l goes to row J * chunks + L0 + l; consecutive threads take
  // consecutive J (conflict-free shared reads) and write the tl chunks' values as vectors.
  D* yb = a.y + b * a.y_bs + L0;
  if (a.vector_store) {
    using V = typename Vector16<D>::type;
    constexpr int n = Vector16<D>::n;
    for (int e = tid; e < elements / n; e += kThreads) {
      const int J = e & (chunk - 1), l0 = (e >> a.log_chunk) * n;
      D* yp = yb + J * a.chunks + l0;
      D v[n];
#pragma unroll
      for (int i = 0; i < n; ++i)
        v[i] = xs[padded<D>(((l0 + i) << a.log_chunk) + J)];
      if (a.scale) {
        D old[n] = {};
        if (!a.beta_zero) *reinterpret_cast<V*>(old) = *reinterpret_cast<const V*>(yp);
#pragma unroll
        for (int i = 0; i < n; ++i)
          v[i] = a.beta_zero ? a.alpha * v[i] : a.alpha * v[i] + a.beta * old[i];
      }
      *reinterpret_cast<V*>(yp) = *reinterpret_cast<const V*>(v);
    }
  } else {
    for (int e = tid; e < elements; e += kThreads) {
      const int J = e & (chunk - 1), l = e >> a.log_chunk;
      D* yp = yb + J * a.chunks + l;
      *yp = scaled(xs[padded<D>((l << a.log_chunk) + J)], yp, a);
    }
  }
}

int log2_index(Index v) {
  int l = 0;
  while ((Index(1) << l) < v)
    ++l;
  return l;
}

}  // namespace

template <class T>
bool kron_fused_square(std::span<const KronFactorRef<T>> group, ConstView<T> in, MatrixView<T> out,
                       T alpha, T beta, bool scale, Context& ctx) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  using D = T;
  std::vector<KronShape> shapes;
  for (const auto& g : group)
    shapes.push_back({g.P, g.Q});
  const Index tl = kron_square_chunks_per_block(shapes, in.rows, sizeof(T), false);
  const bool batch_first = in.row_stride == 1 && out.row_stride == 1;
  if (tl == 0 || !batch_first || int(group.size()) > kKronMaxFused) return false;

  const int P = int(shapes.front().P);
  const int count = int(group.size());
  Index chunk = 1;
  for (int i = 0; i < count; ++i)
    chunk *= P;
  SquareArgs<D> a{};
  a.count = count;
  for (int i = 0; i < count; ++i) {
    const KronFactorRef<T>& g = group[count - 1 - i];  // hi first
    a.g[i] = g.data;
    a.sq[i] = g.stride_q;
    a.sp[i] = g.stride_p;
  }
  a.x = in.data;
  a.x_bs = in.col_stride;
  a.y = out.data;
  a.y_bs = out.col_stride;
  a.chunks = in.rows / chunk;
  a.l_tiles = a.chunks / tl;
  a.log_chunk = log2_index(chunk);
  a.log_tl = log2_index(tl);
  a.alpha = alpha;
  a.beta = beta;
  a.scale = scale;
  a.beta_zero = beta == T(0);
  constexpr Index n = Index(16 / sizeof(T));
  a.vector_store = reinterpret_cast<std::uintptr_t>(out.data) % 16 == 0 &&
                   (in.cols == 1 || out.col_stride % n == 0);
  const Index elements = chunk * tl;
  const std::size_t shared = sizeof(T) * std::size_t(count * P * P + padded<T>(int(elements)));
  const long long blocks = a.l_tiles * in.cols;
  require<DeviceError>(blocks <= INT_MAX, "kron fused: ", blocks, " blocks exceed the grid");
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto run = [&](auto kernel) {
    check_cuda(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
        "kron fused (square): shared memory attribute");
    kernel<<<unsigned(blocks), kThreads, shared, stream>>>(a);
    check_launch("kron_square_kernel");
  };
  // RS rows x QT outputs per thread: 32 accumulators in float, 16 in double
  // (kron_square_accumulators); P = 32 splits the outputs between two lanes.
  constexpr bool f32 = sizeof(T) == 4;
  switch (P) {
    case 2:
      run(kron_square_kernel < D, 2, f32 ? 16 : 8, 2 >);
      break;
    case 4:
      run(kron_square_kernel < D, 4, f32 ? 8 : 4, 4 >);
      break;
    case 8:
      run(kron_square_kernel < D, 8, f32 ? 4 : 2, 8 >);
      break;
    case 16:
      run(kron_square_kernel < D, 16, f32 ? 2 : 1, 16 >);
      break;
    default:
      run(kron_square_kernel < D, 32, f32 ? 2 : 1, 16 >);
      break;
  }
  return true;
}

template bool kron_fused_square(std::span<const KronFactorRef<float>>, ConstView<float>,
                                MatrixView<float>, float, float, bool, Context&);
template bool kron_fused_square(std::span<const KronFactorRef<double>>, ConstView<double>,
                                MatrixView<double>, double, double, bool, Context&);

}  // namespace strop::detail
