// The Kron-matmul kernels: FastKron's sliced multiply (one factor per launch), the fused
// multi-factor kernel (several small factors on a shared-memory chunk), and the permute and
// pack kernels of the shuffle baseline.
//
// Sliced multiply, one factor (NOTES.md, "sliced-multiply step"):
//   out[q*S + s, b] = sum_p G[q][p] in[s*P + p, b],  S = K/P.
// A block owns a tile of ts slices x tb signals (tc = ts*tb "columns" c) and tq values of q.
// It stages tp values of p at a time: X as xs[p][c] (c fastest, padded), G as gs[p][q].
// Each thread accumulates an RC x RQ register tile: RC columns c strided by the number of
// column threads (so a warp reads 32 consecutive c: no bank conflicts), RQ consecutive q
// (the same for the whole warp: broadcast reads, 16-byte wide when aligned). Column order
// follows the output's memory order (s fastest for batch-first data, b fastest for
// batch-last), so both the loads and the stores coalesce in either layout.
#include <cuda_pipeline.h>
#include <algorithm>
#include <climits>

#include "operators/kron/kron_device.cuh"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cuda_check.hpp"

namespace strop::detail {
namespace {

using namespace kron_device;

// Stages G[q0..q0+nq)[p0..p0+np) (or the identity) into gs as [p][ld] (q fastest), zero
// outside the factor; conjugation is applied by each thread to its own elements after the
// copies land, so call finish_factor_tile after __pipeline_wait_prior.
template <class D>
__device__ __forceinline__ void stage_factor_tile(D* gs, int ld, int np, int nq, const D* g,
                                                  long long sq, long long sp, int P, int Q, int p0,
                                                  int q0) {
  for (int e = threadIdx.x; e < np * ld; e += blockDim.x) {
    const int q = e % ld, p = e / ld;
    D* dst = gs + e;
    const bool inside = q < nq && p0 + p < P && q0 + q < Q;
    if (inside && g != nullptr)
      copy_async(dst, g + (q0 + q) * sq + (p0 + p) * sp);
    else
      *dst = inside && p0 + p == q0 + q ? unit<D>() : D{};
  }
}
template <class D>
__device__ __forceinline__ void finish_factor_tile(D* gs, int ld, int np, int conj) {
  if (!conj) return;
  for (int e = threadIdx.x; e < np * ld; e += blockDim.x)
    gs[e] = conjugate(gs[e]);
}

// ---- one factor ---------------------------------------------------------------------------

template <class D>
struct StepArgs {
  const D* x;
  long long x_fs, x_bs;  // strides of feature and signal
  D* y;
  long long y_fs, y_bs;
  const D* g;
  long long g_sq, g_sp;
  int conj_g;
  int P, Q;
  long long S, B;
  long long s_tiles;
  int ts, tb, log_ts, log_tb;  // tile extents in s and b (powers of two)
  int tp, tq, ntc;             // p chunk, q per block, column threads
  int log_tp;                  // log2(tp), or -1 when tp is no power of two
  int ldx;                     // row length of xs
  int g_offset;                // elements from xs to gs (16-byte aligned)
  int stage;                   // elements of one (xs, gs) buffer (16-byte aligned)
  int in_feature_fast;         // load order: features contiguous (ColMajor input)
  D alpha, beta;
  int scale, beta_zero;
};

template <class D, int RC, int RQ, bool SFast>
__global__ void __launch_bounds__(256) kron_step_kernel(const StepArgs<D> a) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* shared = reinterpret_cast<D*>(shared_raw);

  const int tid = threadIdx.x;
  const int tc = tid & (a.ntc - 1);
  const int tqi = tid / a.ntc;
  const long long bx = blockIdx.x;
  const long long s0 = (bx % a.s_tiles) * a.ts;
  const long long b0 = (bx / a.s_tiles) * a.tb;
  const int q0 = blockIdx.y * a.tq;
  const int tcols = a.ts * a.tb;

  D acc[RC][RQ];
#pragma unroll
  for (int j = 0; j < RC; ++j)
#pragma unroll
    for (int i = 0; i < RQ; ++i)
      acc[j][i] = D{};

  // Chunk k of P is staged into buffer k % 2 while chunk k - 1 is multiplied (cp.async
  // double buffering): the tile loads of all but the first chunk hide behind arithmetic.
  auto stage = [&](int k) {
    const int p0 = k * a.tp;
    D* xs = shared + (k & 1) * a.stage;
    D* gs = xs + a.g_offset;
    const int n_x = a.tp * tcols;
    for (int e = tid; e < n_x; e += blockDim.x) {
      int p, sl, bl;
      if (a.in_feature_fast) {
        int r;
        if (a.log_tp >= 0) {
          p = e & (a.tp - 1);
          r = e >> a.log_tp;
        } else {
          p = e % a.tp;
          r = e / a.tp;
        }
        sl = r & (a.ts - 1);
        bl = r >> a.log_ts;
      } else {
        bl = e & (a.tb - 1);
        const int r = e >> a.log_tb;
        if (a.log_tp >= 0) {
          p = r & (a.tp - 1);
          sl = r >> a.log_tp;
        } else {
          p = r % a.tp;
          sl = r / a.tp;
        }
      }
      const int c = SFast ? sl + (bl << a.log_ts) : bl + (sl << a.log_tb);
      const long long s = s0 + sl, b = b0 + bl;
      D* dst = xs + p * a.ldx + c;
      if (p0 + p < a.P && s < a.S && b < a.B)
        copy_async(dst, a.x + (s * a.P + p0 + p) * a.x_fs + b * a.x_bs);
      else
        *dst = D{};
    }
    stage_factor_tile(gs, a.tq, a.tp, a.tq, a.g, a.g_sq, a.g_sp, a.P, a.Q, p0, q0);
  };
  const int chunks = (a.P + a.tp - 1) / a.tp;
  stage(0);
  __pipeline_commit();
  for (int k = 0; k < chunks; ++k) {
    if (k + 1 < chunks) stage(k + 1);
    __pipeline_commit();  // possibly empty: keeps "all but the newest group" = chunk k
    __pipeline_wait_prior(1);
    const D* xs = shared + (k & 1) * a.stage;
    D* gs = shared + (k & 1) * a.stage + a.g_offset;
    finish_factor_tile(gs, a.tq, a.tp, a.conj_g);
    __syncthreads();
    const int tp_here = min(a.tp, a.P - k * a.tp);
#pragma unroll 4
    for (int p = 0; p < tp_here; ++p) {
      D xv[RC], gv[RQ];
#pragma unroll
      for (int j = 0; j < RC; ++j)
        xv[j] = xs[p * a.ldx + tc + j * a.ntc];
      const D* grow = gs + p * a.tq + tqi * RQ;
      if constexpr ((RQ * sizeof(D)) % 16 == 0) {
        grow = static_cast<const D*>(__builtin_assume_aligned(grow, 16));
      }
#pragma unroll
      for (int i = 0; i < RQ; ++i)
        gv[i] = grow[i];
#pragma unroll
      for (int j = 0; j < RC; ++j)
#pragma unroll
        for (int i = 0; i < RQ; ++i)
          multiply_add(acc[j][i], gv[i], xv[j]);
    }
    __syncthreads();  // buffer k % 2 is refilled by the stage of chunk k + 2
  }

#pragma unroll
  for (int j = 0; j < RC; ++j) {
    const int c = tc + j * a.ntc;
    int sl, bl;
    if constexpr (SFast) {
      sl = c & (a.ts - 1);
      bl = c >> a.log_ts;
    } else {
      bl = c & (a.tb - 1);
      sl = c >> a.log_tb;
    }
    const long long s = s0 + sl, b = b0 + bl;
    if (s >= a.S || b >= a.B) continue;
#pragma unroll
    for (int i = 0; i < RQ; ++i) {
      const int q = q0 + tqi * RQ + i;
      if (q >= a.Q) continue;
      D* yp = a.y + (q * a.S + s) * a.y_fs + b * a.y_bs;
      *yp = epilogue(acc[j][i], yp, a.scale, a.beta_zero, a.alpha, a.beta);
    }
  }
}

long long pow2_ceil(long long v) {
  long long p = 1;
  while (p < v)
    p *= 2;
  return p;
}

template <class D, int RC, int RQ>
void launch_step(StepArgs<D> a, bool s_fast, long long b_tiles, cudaStream_t stream) {
  const int threads = a.ntc * (a.tq / RQ);
  const std::size_t shared = sizeof(D) * std::size_t(2 * a.stage);
  const long long blocks = a.s_tiles * b_tiles;
  require<DeviceError>(blocks <= INT_MAX, "kron: ", blocks, " thread blocks exceed the grid limit");
  const dim3 grid(unsigned(blocks), unsigned((a.Q + a.tq - 1) / a.tq));
  auto run = [&](auto kernel) {
    allow_dynamic_shared_memory(kernel, shared, "kron step: shared memory attribute");
    kernel<<<grid, threads, shared, stream>>>(a);
    check_launch("kron_step_kernel");
  };
  if (s_fast)
    run(kron_step_kernel<D, RC, RQ, true>);
  else
    run(kron_step_kernel<D, RC, RQ, false>);
}

// The register tile (RC, RQ) for a scalar type and Q: as large as registers allow (more
// reuse of each shared-memory read), narrower along Q when Q is small.
template <class D>
struct StepTiles;
template <>
struct StepTiles<float> {
  static constexpr int rc = 8;
};
template <>
struct StepTiles<double> {
  static constexpr int rc = 4;
};
template <>
struct StepTiles<DeviceComplex<float>> {
  static constexpr int rc = 4;
};
template <>
struct StepTiles<DeviceComplex<double>> {
  static constexpr int rc = 2;
};

template <class D>
void step_dispatch(StepArgs<D> a, int rq_wanted, bool s_fast, cudaStream_t stream) {
  constexpr int RC = StepTiles<D>::rc;
  // Column threads, q threads and the tile of columns.
  const int rq = rq_wanted;
  int ntq = int(pow2_ceil((a.Q + rq - 1) / rq));
  ntq = std::min(ntq, 8);
  a.tq = ntq * rq;
  a.ntc = 256 / ntq;
  const long long tcols = (long long)a.ntc * RC;
  // Split the columns between slices and signals in the output's memory order.
  if (s_fast) {
    a.ts = int(std::min<long long>(tcols, pow2_ceil(a.S)));
    a.tb = int(tcols / a.ts);
  } else {
    a.tb = int(std::min<long long>(tcols, pow2_ceil(a.B)));
    a.ts = int(tcols / a.tb);
  }
  a.log_ts = kron_log2(a.ts);
  a.log_tb = kron_log2(a.tb);
  // Chunk of P: up to 32 at a time, fewer when the two staged tiles would pass 100 KB of
  // shared memory (two blocks per SM of an H100 still fit), or what the device's blocks have.
  a.tp = std::min(a.P, 32);
  const std::size_t budget = std::min<std::size_t>(100 * 1024, shared_memory_per_block());
  const int words = int(sizeof(D) / 4);
  auto layout = [&] {
    const int pad = std::max(1, (32 / words) / std::max(1, a.tp));
    a.ldx = int(tcols) + pad;
    a.g_offset = (a.tp * a.ldx * int(sizeof(D)) + 15) / 16 * 16 / int(sizeof(D));
    a.stage = ((a.g_offset + a.tp * a.tq) * int(sizeof(D)) + 15) / 16 * 16 / int(sizeof(D));
  };
  layout();
  while (a.tp > 1 && sizeof(D) * std::size_t(2 * a.stage) > budget) {
    a.tp = (a.tp + 1) / 2;
    layout();
  }
  a.log_tp = (a.tp & (a.tp - 1)) == 0 ? kron_log2(a.tp) : -1;
  a.s_tiles = (a.S + a.ts - 1) / a.ts;
  const long long b_tiles = (a.B + a.tb - 1) / a.tb;
  switch (rq) {
    case 8:
      if constexpr (sizeof(D) <= 8) return launch_step<D, RC, 8>(a, s_fast, b_tiles, stream);
      break;
    case 4:
      return launch_step<D, RC, 4>(a, s_fast, b_tiles, stream);
    default:
      return launch_step<D, RC, 1>(a, s_fast, b_tiles, stream);
  }
  return launch_step<D, RC, 4>(a, s_fast, b_tiles, stream);
}

// ---- several factors in shared memory -------------------------------------------------------

template <class D>
struct FusedFactor {
  const D* g;
  long long sq, sp;
  int P, Q, conj, g_offset;
};

template <class D>
struct FusedArgs {
  FusedFactor<D> f[kKronMaxFused];  // in application order
  int count;
  const D* x;
  long long x_fs, x_bs;
  D* y;
  long long y_fs, y_bs;
  long long chunks, B, l_tiles;
  int chunk_in, chunk_out;
  int tl, log_tl;    // chunks per block (a power of two)
  int log_chunk_in;  // log2(chunk_in), or -1
  int ld;            // elements between chunks in shared memory
  int buf;           // elements per buffer
  D alpha, beta;
  int scale, beta_zero;
};

// Each thread item computes RS slices (s, s + part, ...) x RQ values of q, so that every
// factor value read from shared memory feeds RS multiply-adds and every x value RQ.
template <class D, int RQ, int RS>
__global__ void __launch_bounds__(256) kron_fused_kernel(const FusedArgs<D> a) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* buf0 = reinterpret_cast<D*>(shared_raw);
  D* buf1 = buf0 + a.buf;
  D* gs = buf1 + a.buf;
  const int tid = threadIdx.x;
  const long long lt = blockIdx.x % a.l_tiles;
  const long long b = blockIdx.x / a.l_tiles;
  const long long L0 = lt * a.tl;

  // The block's chunks are contiguous in a batch-first input: one coalesced sweep.
  const int n_in = a.tl * a.chunk_in;
  for (int e = tid; e < n_in; e += blockDim.x) {
    int l, k;
    if (a.log_chunk_in >= 0) {
      l = e >> a.log_chunk_in;
      k = e & (a.chunk_in - 1);
    } else {
      l = e / a.chunk_in;
      k = e - l * a.chunk_in;
    }
    D* dst = buf0 + l * a.ld + padded<D>(k);
    if (L0 + l < a.chunks)
      copy_async(dst, a.x + ((L0 + l) * a.chunk_in + k) * a.x_fs + b * a.x_bs);
    else
      *dst = D{};
  }
  for (int f = 0; f < a.count; ++f) {
    const FusedFactor<D> F = a.f[f];
    const int qpad = (F.Q + RQ - 1) / RQ * RQ;
    stage_factor_tile(gs + F.g_offset, qpad, F.P, qpad, F.g, F.sq, F.sp, F.P, F.Q, 0, 0);
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  for (int f = 0; f < a.count; ++f) {
    const FusedFactor<D> F = a.f[f];
    finish_factor_tile(gs + F.g_offset, (F.Q + RQ - 1) / RQ * RQ, F.P, F.conj);
  }
  __syncthreads();

  D* in = buf0;
  D* out = buf1;
  int cur = a.chunk_in;
  for (int f = 0; f < a.count; ++f) {
    const FusedFactor<D> F = a.f[f];
    const int S = cur / F.P;
    const int part = (S + RS - 1) / RS;  // slices s, s + part, s + 2 part, ... per item
    const int qgroups = (F.Q + RQ - 1) / RQ;
    const int qpad = qgroups * RQ;
    const int items = part * a.tl * qgroups;
    // Power-of-two extents (the common case) index with shifts; P <= 32 dividing the
    // padding period keeps a slice inside one padding run, so its base is padded once.
    const bool pow2_part = (part & (part - 1)) == 0;
    const int log_part = __ffs(part) - 1;
    const bool contiguous_slices = (F.P & (F.P - 1)) == 0 && F.P <= 128 / int(sizeof(D));
    for (int w = tid; w < items; w += blockDim.x) {
      int s, r;
      if (pow2_part) {
        s = w & (part - 1);
        r = w >> log_part;
      } else {
        s = w % part;
        r = w / part;
      }
      const int l = r & (a.tl - 1);
      const int qg = r >> a.log_tl;
      int base[RS];
#pragma unroll
      for (int k = 0; k < RS; ++k) {
        const int sk = s + k * part < S ? s + k * part : s;  // a valid row; not stored
        base[k] = sk * F.P;
      }
      D acc[RS][RQ];
#pragma unroll
      for (int k = 0; k < RS; ++k)
#pragma unroll
        for (int i = 0; i < RQ; ++i)
          acc[k][i] = D{};
      const D* xin = in + l * a.ld;
      const D* g = gs + F.g_offset + qg * RQ;
      if (contiguous_slices) {
#pragma unroll
        for (int k = 0; k < RS; ++k)
          base[k] = padded<D>(base[k]);
      }
#pragma unroll 4
      for (int p = 0; p < F.P; ++p) {
        D xv[RS];
#pragma unroll
        for (int k = 0; k < RS; ++k)
          xv[k] = contiguous_slices ? xin[base[k] + p] : xin[padded<D>(base[k] + p)];
        const D* grow = g + p * qpad;
        if constexpr ((RQ * sizeof(D)) % 16 == 0) {
          grow = static_cast<const D*>(__builtin_assume_aligned(grow, 16));
        }
#pragma unroll
        for (int i = 0; i < RQ; ++i) {
          const D gv = grow[i];
#pragma unroll
          for (int k = 0; k < RS; ++k)
            multiply_add(acc[k][i], gv, xv[k]);
        }
      }
      D* xo = out + l * a.ld;
#pragma unroll
      for (int i = 0; i < RQ; ++i) {
        const int q = qg * RQ + i;
        if (q >= F.Q) continue;
#pragma unroll
        for (int k = 0; k < RS; ++k)
          if (s + k * part < S) xo[padded<D>(q * S + s + k * part)] = acc[k][i];
      }
    }
    __syncthreads();
    D* t = in;
    in = out;
    out = t;
    cur = S * F.Q;
  }

  // Local result J of chunk L goes to global row J*chunks + L: the block's chunks are
  // consecutive there, so consecutive threads take consecutive chunks.
  const int n_out = a.tl * a.chunk_out;
  for (int e = tid; e < n_out; e += blockDim.x) {
    const int l = e & (a.tl - 1), J = e >> a.log_tl;
    if (L0 + l >= a.chunks) continue;
    D* yp = a.y + (J * a.chunks + L0 + l) * a.y_fs + b * a.y_bs;
    *yp = epilogue(in[l * a.ld + padded<D>(J)], yp, a.scale, a.beta_zero, a.alpha, a.beta);
  }
}

// ---- shuffle pieces -------------------------------------------------------------------------

// out[n0][c][a][e] = in[n0][a][c][e] with e == 1: 32 x 32 tiles through shared memory.
template <class D>
__global__ void kron_transpose_kernel(const D* in, D* out, long long A, long long C,
                                      long long a_tiles, D alpha, D beta, int scale,
                                      int beta_zero) {
  __shared__ D tile[32][33];
  const long long n0 = blockIdx.z;
  const long long at = blockIdx.x % a_tiles;
  const long long ct = blockIdx.x / a_tiles;
  const long long a0 = at * 32, c0 = ct * 32;
  const D* src = in + n0 * A * C;
  D* dst = out + n0 * A * C;
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const long long a = a0 + r, c = c0 + threadIdx.x;
    if (a < A && c < C) tile[r][threadIdx.x] = src[a * C + c];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const long long c = c0 + r, a = a0 + threadIdx.x;
    if (a < A && c < C) {
      D* yp = dst + c * A + a;
      *yp = epilogue(tile[threadIdx.x][r], yp, scale, beta_zero, alpha, beta);
    }
  }
}

// General e: one thread per output element, e fastest (both sides contiguous along e).
template <class D>
__global__ void kron_permute_kernel(const D* in, D* out, long long n0s, long long A, long long C,
                                    long long E, D alpha, D beta, int scale, int beta_zero) {
  const long long total = n0s * A * C * E;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long e = i % E;
    long long r = i / E;
    const long long a = r % A;
    r /= A;
    const long long c = r % C;
    const long long n0 = r / C;
    D* yp = out + i;
    *yp = epilogue(in[((n0 * A + a) * C + c) * E + e], yp, scale, beta_zero, alpha, beta);
  }
}

template <class D>
__global__ void kron_pack_kernel(const D* g, long long sq, long long sp, int conj, long long P,
                                 long long Q, D* out) {
  const long long total = P * Q;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long q = i % Q, p = i / Q;
    out[i] = factor_value(g, sq, sp, conj, q, p);
  }
}

// A run of factors for the merge kernel, by value (at most kKronMaxFused).
template <class D>
struct MergeGroup {
  const D* g[kKronMaxFused];
  long long sq[kKronMaxFused], sp[kKronMaxFused], P[kKronMaxFused], Q[kKronMaxFused];
  int conj[kKronMaxFused];
  int count;
};

// out (column-major, prod Q x prod P) = G_0 ⊗ ... ⊗ G_{count-1}: entry (q, p) is the product
// of G_f[q_f][p_f] over the digits of q and p (the last factor least significant).
template <class D>
__global__ void kron_merge_kernel(MergeGroup<D> group, long long P, long long Q, D* out) {
  const long long total = P * Q;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long q = i % Q, p = i / Q;
    D value = unit<D>();
    for (int f = group.count - 1; f >= 0; --f) {
      const long long qf = q % group.Q[f], pf = p % group.P[f];
      q /= group.Q[f];
      p /= group.P[f];
      value = mul(value, factor_value(group.g[f], group.sq[f], group.sp[f], group.conj[f], qf, pf));
    }
    out[i] = value;
  }
}

template <class T>
bool is_zero_host(T v) {
  return v == T(0);
}

}  // namespace

template <class T>
void kron_step(const KronFactorRef<T>& g, ConstView<T> in, MatrixView<T> out, T alpha, T beta,
               bool scale, Context& ctx) {
  using D = DeviceScalar<T>;
  require<DeviceError>(g.P <= INT_MAX && g.Q <= INT_MAX, "kron: factor ", g.Q, "x", g.P,
                       " too large for the kernel");
  StepArgs<D> a{};
  a.x = reinterpret_cast<const D*>(in.data);
  a.x_fs = in.row_stride;
  a.x_bs = in.col_stride;
  a.y = reinterpret_cast<D*>(out.data);
  a.y_fs = out.row_stride;
  a.y_bs = out.col_stride;
  a.g = reinterpret_cast<const D*>(g.data);
  a.g_sq = g.stride_q;
  a.g_sp = g.stride_p;
  a.conj_g = g.conjugate;
  a.P = int(g.P);
  a.Q = int(g.Q);
  a.S = in.rows / g.P;
  a.B = in.cols;
  a.in_feature_fast = in.row_stride == 1 || in.cols == 1;
  a.alpha = to_device_scalar(alpha);
  a.beta = to_device_scalar(beta);
  a.scale = scale;
  a.beta_zero = is_zero_host(beta);
  const bool s_fast = out.row_stride == 1 || out.cols == 1;
  const int rq = sizeof(T) == 16 ? (g.Q >= 4 ? 4 : 1) : (g.Q >= 8 ? 8 : g.Q >= 4 ? 4 : 1);
  step_dispatch<D>(a, rq, s_fast, static_cast<cudaStream_t>(ctx.stream()));
}

template <class T>
void kron_fused(std::span<const KronFactorRef<T>> group, ConstView<T> in, MatrixView<T> out,
                T alpha, T beta, bool scale, Context& ctx) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (kron_fused_square(group, in, out, alpha, beta, scale, ctx)) return;
  }
  using D = DeviceScalar<T>;
  const int count = int(group.size());
  require<DeviceError>(count >= 1 && count <= kKronMaxFused, "kron fused: ", count,
                       " factors in one pass (1..", kKronMaxFused, ")");
  constexpr std::size_t bytes = sizeof(T);
  const int rq = kron_fused_rq(bytes);
  FusedArgs<D> a{};
  a.count = count;
  std::vector<KronShape> shapes;
  Index chunk_in = 1, chunk_out = 1;
  for (const auto& g : group) {
    shapes.push_back({g.P, g.Q});
    chunk_in *= g.P;
    chunk_out *= g.Q;
  }
  Index len = chunk_in, max_len = chunk_in;
  int g_offset = 0;
  for (int i = 0; i < count; ++i) {
    const KronFactorRef<T>& g = group[count - 1 - i];  // hi first
    FusedFactor<D>& F = a.f[i];
    F.g = reinterpret_cast<const D*>(g.data);
    F.sq = g.stride_q;
    F.sp = g.stride_p;
    F.P = int(g.P);
    F.Q = int(g.Q);
    F.conj = g.conjugate;
    F.g_offset = g_offset;
    g_offset += int(g.P * ((g.Q + rq - 1) / rq * rq));
    len = len / g.P * g.Q;
    max_len = std::max(max_len, len);
  }
  a.x = reinterpret_cast<const D*>(in.data);
  a.x_fs = in.row_stride;
  a.x_bs = in.col_stride;
  a.y = reinterpret_cast<D*>(out.data);
  a.y_fs = out.row_stride;
  a.y_bs = out.col_stride;
  a.chunks = in.rows / chunk_in;
  a.B = in.cols;
  a.chunk_in = int(chunk_in);
  a.chunk_out = int(chunk_out);
  a.ld = int(kron_chunk_stride(max_len, bytes));
  // Chunks per block: no more than the pass has, then fewer until shared memory fits. Few
  // chunks per block means short runs per output row, but neighbouring blocks write the
  // neighbouring pieces at about the same time and L2 merges them into whole sectors.
  Index tl = 32;
  while (tl > 1 && tl / 2 >= pow2_ceil(a.chunks))
    tl /= 2;
  while (tl > 1 && kron_fused_shared_bytes(shapes, tl, bytes, rq) > kKronFusedSharedBudget)
    tl /= 2;
  a.tl = int(tl);
  a.log_tl = kron_log2(tl);
  a.log_chunk_in = (chunk_in & (chunk_in - 1)) == 0 ? kron_log2(chunk_in) : -1;
  // Buffers rounded to 16 bytes: the factors behind them are read with 16-byte loads.
  const int align = int(std::max<std::size_t>(1, 16 / bytes));
  a.buf = (int(tl) * a.ld + align - 1) / align * align;
  a.l_tiles = (a.chunks + tl - 1) / tl;
  a.alpha = to_device_scalar(alpha);
  a.beta = to_device_scalar(beta);
  a.scale = scale;
  a.beta_zero = is_zero_host(beta);
  const std::size_t shared = bytes * std::size_t(2 * a.buf + g_offset);
  require<DeviceError>(shared <= 200 * 1024, "kron fused: ", shared,
                       " bytes of shared memory needed (factors too large to fuse)");
  const long long blocks = a.l_tiles * a.B;
  require<DeviceError>(blocks <= INT_MAX, "kron fused: ", blocks, " blocks exceed the grid");
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto run = [&](auto kernel) {
    allow_dynamic_shared_memory(kernel, shared, "kron fused: shared memory attribute");
    kernel<<<unsigned(blocks), 256, shared, stream>>>(a);
    check_launch("kron_fused_kernel");
  };
  // Four slices per item when that still leaves every thread an item in each step.
  Index min_slices = chunk_in;
  {
    Index cur = chunk_in;
    for (int i = 0; i < count; ++i) {
      min_slices = std::min(min_slices, cur / a.f[i].P);
      cur = cur / a.f[i].P * a.f[i].Q;
    }
  }
  const bool four = min_slices / 4 * tl >= 256;
  if constexpr (sizeof(T) == 4) {
    if (four)
      run(kron_fused_kernel<D, 8, 4>);
    else
      run(kron_fused_kernel<D, 8, 2>);
  } else if constexpr (sizeof(T) == 16) {
    run(kron_fused_kernel<D, 2, 2>);
  } else {
    if (four)
      run(kron_fused_kernel<D, 4, 4>);
    else
      run(kron_fused_kernel<D, 4, 2>);
  }
}

template <class T>
void kron_permute(const T* in, T* out, Index n0, Index a, Index c, Index e, T alpha, T beta,
                  bool scale, Context& ctx) {
  using D = DeviceScalar<T>;
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  const auto* src = reinterpret_cast<const D*>(in);
  auto* dst = reinterpret_cast<D*>(out);
  const D al = to_device_scalar(alpha), be = to_device_scalar(beta);
  if (e == 1) {
    const long long a_tiles = (a + 31) / 32, c_tiles = (c + 31) / 32;
    require<DeviceError>(a_tiles * c_tiles <= INT_MAX, "kron shuffle: transpose of ", a, " x ", c,
                         " exceeds the grid");
    // The grid's z extent holds at most 65535 of the n0 matrices: a launch per chunk of them.
    const Index chunk = 65535, matrix = a * c;
    for (Index b0 = 0; b0 < n0; b0 += chunk) {
      const Index count = std::min(chunk, n0 - b0);
      kron_transpose_kernel<D>
          <<<dim3(unsigned(a_tiles * c_tiles), 1, unsigned(count)), dim3(32, 8), 0, stream>>>(
              src + b0 * matrix, dst + b0 * matrix, a, c, a_tiles, al, be, scale,
              is_zero_host(beta));
    }
  } else {
    const long long total = n0 * a * c * e;
    const long long blocks = std::min<long long>((total + 255) / 256, 65536LL * 16);
    kron_permute_kernel<D><<<unsigned(std::max<long long>(blocks, 1)), 256, 0, stream>>>(
        src, dst, n0, a, c, e, al, be, scale, is_zero_host(beta));
  }
  check_launch("kron_permute_kernel");
}

template <class T>
void kron_pack_factor(const KronFactorRef<T>& g, T* out, Context& ctx) {
  using D = DeviceScalar<T>;
  const long long total = g.P * g.Q;
  const long long blocks = std::min<long long>((total + 255) / 256, 4096);
  kron_pack_kernel<D><<<unsigned(std::max<long long>(blocks, 1)), 256, 0,
                        static_cast<cudaStream_t>(ctx.stream())>>>(
      reinterpret_cast<const D*>(g.data), g.stride_q, g.stride_p, g.conjugate, g.P, g.Q,
      reinterpret_cast<D*>(out));
  check_launch("kron_pack_kernel");
}

template <class T>
void kron_merge_factors(std::span<const KronFactorRef<T>> group, T* out, Context& ctx) {
  using D = DeviceScalar<T>;
  require<ShapeError>(!group.empty() && group.size() <= std::size_t(kKronMaxFused),
                      "kron_merge_factors: 1 to ", kKronMaxFused, " factors, got ", group.size());
  MergeGroup<D> g{};
  long long P = 1, Q = 1;
  for (std::size_t f = 0; f < group.size(); ++f) {
    g.g[f] = reinterpret_cast<const D*>(group[f].data);
    g.sq[f] = group[f].stride_q;
    g.sp[f] = group[f].stride_p;
    g.P[f] = group[f].P;
    g.Q[f] = group[f].Q;
    g.conj[f] = group[f].conjugate;
    P *= group[f].P;
    Q *= group[f].Q;
  }
  g.count = int(group.size());
  const long long blocks = std::min<long long>((P * Q + 255) / 256, 4096);
  kron_merge_kernel<D>
      <<<unsigned(std::max<long long>(blocks, 1)), 256, 0,
         static_cast<cudaStream_t>(ctx.stream())>>>(g, P, Q, reinterpret_cast<D*>(out));
  check_launch("kron_merge_kernel");
}

#define STROP_INSTANTIATE(T)                                                                     \
  template void kron_merge_factors(std::span<const KronFactorRef<T>>, T*, Context&);             \
  template void kron_step(const KronFactorRef<T>&, ConstView<T>, MatrixView<T>, T, T, bool,      \
                          Context&);                                                             \
  template void kron_fused(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, \
                           bool, Context&);                                                      \
  template void kron_permute(const T*, T*, Index, Index, Index, Index, T, T, bool, Context&);    \
  template void kron_pack_factor(const KronFactorRef<T>&, T*, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
