// The fused pass for a run of equal square factors (G factors of P x P, P a power of two up
// to 32) on real batch-first data: FastKron's fusion, specialised so that the factors are
// applied in place and every index is a compile-time shift.
//
// A CTA copies a tile of TL consecutive chunks of one signal (TL * P^G contiguous
// features) into shared memory, each chunk padded by one element every 128 bytes. Step s
// applies the factor G_{hi-s} to the digit of stride c = P^s of every chunk: the P elements
// (t*P*c + p*c + c_idx) for p < P form a "row" (t = which chunk and which higher digits,
// c_idx < c the lower digits), and row r is (t, c_idx) = (r / c, r % c). The results go
// back to the positions they were read from, so after G steps a chunk holds its outputs in
// natural digit order, which is the sliced multiply's output order J within the chunk;
// element J of chunk L is written to row J * (K / P^G) + L of the output (the rotation of
// FastKron's sliced multiply). TL consecutive chunks give each output row a run of TL
// values; where that is under 32 bytes (16^3 and 8^4 chunks in float) the two CTAs of a
// cluster take neighbouring tiles and each writes whole 32-byte runs for half of the rows,
// reading the other half of each run from its partner's shared memory: a DRAM sector
// written in two halves by different CTAs measured 4-5x slower than the copy rate.
//
// In place needs every read of a row before any write to it: a thread owns whole rows for
// one step (RS rows x all P outputs, or a team of P / QT lanes of one warp splits the
// outputs and waits at __syncwarp before writing). The rows of a thread are R / RS apart,
// so a warp reads 32 consecutive rows (row_of spreads them where they would share banks).
// Padded addresses split as padded(row start) + padded(p * c), so the p loop reads shared
// memory at compile-time offsets. Per p a thread issues RS loads of x, QT / 4 16-byte
// broadcast loads of the factor and RS * QT multiply-adds.
#include <algorithm>

#include "operators/kron/kron_device.cuh"
#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cluster_device.cuh"
#include "runtime/cluster_launch.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/mbarrier_device.cuh"

namespace strop::detail {
namespace {

using namespace kron_device;

constexpr int kThreads = kKronSquareThreads;  // the step threads

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
  long long chunks;                    // K / P^G
  long long units_per_signal;          // a unit: 2^log_cluster tiles of consecutive chunks
  long long B;                         // signals
  int ld;                              // elements from one chunk to the next in shared memory
  int log_chunk, log_tl;               // chunk and tile (chunks per CTA) sizes
  int log_cluster;                     // the CTAs of a cluster take a unit's tiles
  int buffer_offset, buffer_elements;  // the tile buffers in shared memory (16-byte aligned)
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

// The row that item row g takes in a step of stride c. Consecutive g are consecutive rows
// except where 1 < c < 32 (float; 16 in double, the elements of 128 bytes): a warp then
// covers c values of c_idx for each of 32 / c values of t, whose starts t * P * c are one
// padding element per 32 apart, i.e. P * c / 32 banks. Taking every (32 / P)-th t instead
// spreads them by c banks, so the warp's 32 reads hit 32 banks.
template <class D, int P, int c>
__device__ __forceinline__ int row_of(int g) {
  constexpr int lanes = 128 / int(sizeof(D));
  constexpr int ts = lanes / c, d = P >= lanes ? 1 : lanes / P;
  if constexpr (c == 1 || c >= lanes || d == 1) {
    return g;
  } else {
    constexpr int log_c = log2_of(c);
    const int rest = g >> log_c, j = rest % ts, u = rest / ts;
    const int t = u / d * (d * ts) + j * d + u % d;
    return (t << log_c) + (g & (c - 1));
  }
}

// Step S: the factor f ([p][q], q fastest) on the digit of stride c = P^S, in place.
template <class D, int P, int RS, int QT, int S>
__device__ __forceinline__ void square_step(D* xs, const D* f, int elements, int log_chunk,
                                            int ld) {
  constexpr int team = P / QT;
  constexpr int c = power(P, S), log_c = S * log2_of(P);
  const int spread = (elements / P) / RS;  // rows between a thread's rows
  const int items = spread * team;         // a multiple of kThreads (host check)
  for (int i = threadIdx.x; i < items; i += kThreads) {
    const int rg = i / team, part = i % team;
    int base[RS];
#pragma unroll
    for (int k = 0; k < RS; ++k) {
      const int r = row_of<D, P, c>(rg + k * spread);
      const int flat = ((r >> log_c) * P << log_c) + (r & (c - 1));
      base[k] = (flat >> log_chunk) * ld + padded<D>(flat & ((1 << log_chunk) - 1));
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

// The step threads' barrier (the movers run on meanwhile).
__device__ __forceinline__ void steps_barrier() {
  named_barrier_sync(1, kThreads);
}

// Steps S, S + 1, ... < count (each chunk is at most kKronSquareMaxChunk, which bounds S).
template <class D, int P, int RS, int QT, int S>
__device__ __forceinline__ void square_steps(D* xs, const D* fs, int count, int elements,
                                             int log_chunk, int ld) {
  if constexpr (power(P, S + 1) <= kKronSquareMaxChunk) {
    if (S < count) {
      square_step<D, P, RS, QT, S>(xs, fs + S * P * P, elements, log_chunk, ld);
      steps_barrier();
      square_steps<D, P, RS, QT, S + 1>(xs, fs, count, elements, log_chunk, ld);
    }
  }
}

// Copies the tile of chunks [lt * tl, (lt + 1) * tl) of signal b into xs without waiting.
// Thread t copies elements t + i kThreads. Where a chunk holds more than kThreads elements,
// the copies of one chunk sit padded(kThreads) apart and the next chunk starts ld further
// on; otherwise each copy is a whole number of chunk strides past the one before. The
// loops walk pointers with compile-time steps and four or two copies unrolled, so a copy is
// one instruction with an immediate offset instead of recomputing its 64-bit source and its
// chunk from i (10.5 instructions per copy, ncu, session 54). A loop of one copy per
// iteration measured 20 per copy (session 55), hence the chunk of kThreads goes flat.
template <class D>
__device__ __forceinline__ void load_tile(D* xs, long long lt, long long b, int elements,
                                          const SquareArgs<D>& a) {
  constexpr int log_threads = log2_of(kThreads), stride = padded<D>(kThreads);
  const int t = int(threadIdx.x);
  const D* src = a.x + b * a.x_bs + ((lt << a.log_tl) << a.log_chunk) + t;
  const int copies = elements >> log_threads;  // elements is a multiple of kThreads (host check)
  if (a.log_chunk > log_threads + 1) {         // four or more copies per chunk
    const int per_chunk = 1 << (a.log_chunk - log_threads);
    D* d = xs + padded<D>(t);
    for (int c = 0; c < copies; c += per_chunk, d += a.ld, src += per_chunk * kThreads)
      for (int j = 0; j < per_chunk; j += 4)
#pragma unroll
        for (int u = 0; u < 4; ++u)
          copy_async(d + (j + u) * stride, src + (j + u) * kThreads);
  } else if (a.log_chunk == log_threads + 1) {  // two
    D* d = xs + padded<D>(t);
#pragma unroll 2
    for (int c = 0; c < copies; c += 2, d += a.ld, src += 2 * kThreads) {
      copy_async(d, src);
      copy_async(d + stride, src + kThreads);
    }
  } else {
    const int step = (kThreads >> a.log_chunk) * a.ld;
    D* d = xs + (t >> a.log_chunk) * a.ld + padded<D>(t & ((1 << a.log_chunk) - 1));
#pragma unroll 4
    for (int i = 0; i < copies; ++i, d += step, src += kThreads)
      copy_async(d, src);
  }
}

// Output J of chunk L goes to row J * chunks + L. A unit's tiles (one per CTA of the
// cluster) are consecutive chunks, so each row gets one run of tl * cluster values; the CTA
// of rank h writes the runs of the rows J in its share of [0, chunk), reading the values of
// the other tiles from their CTAs' shared memory. Consecutive threads take consecutive
// 16-byte pieces of a run, then consecutive J: whole 32-byte sectors per warp instruction.
// Clustered: the sources are in several CTAs (generic loads through the cluster's shared
// window); otherwise all are in this CTA's shared memory (shared-memory loads).
template <class D, bool Clustered, int NT>
__device__ __forceinline__ void store_unit(D* xs, long long unit, int rank, const SquareArgs<D>& a,
                                           int t) {
  constexpr int log_threads = log2_of(NT);
  const long long lu = unit % a.units_per_signal, b = unit / a.units_per_signal;
  const int log_share = a.log_chunk - a.log_cluster, j0 = rank << log_share;
  D* yb = a.y + b * a.y_bs + ((lu << a.log_cluster) << a.log_tl);
  auto source = [&](int h) -> const D* {
    if constexpr (Clustered)
      return cluster_shared(xs, h);
    else
      return xs;
  };
  if (a.vector_store) {
    using V = typename Vector16<D>::type;
    constexpr int n = Vector16<D>::n;
    const int log_local = a.log_tl - log2_of(n);       // pieces of one tile per row
    const int log_pieces = log_local + a.log_cluster;  // pieces per row
    // A thread keeps one piece position for all of its rows, so its source and column are
    // fixed and the index arithmetic is a row step (it was 23-33 % of the kernel's
    // instructions, ncu, session 22). With fewer pieces per row than threads, the threads
    // cover 2^log_step rows at a time; with more (small chunks, never clustered), a thread
    // takes 2^log_sub pieces, kThreads apart, of every row.
    const int log_step = log_pieces < log_threads ? log_threads - log_pieces : 0;
    const int log_sub = log_pieces > log_threads ? log_pieces - log_threads : 0;
    const int piece = t & ((1 << (log_pieces - log_sub)) - 1);
    const int h = piece >> log_local, l0 = (piece & ((1 << log_local) - 1)) * n;
    const D* src = source(h) + l0 * a.ld;
    D* yc = yb + (h << a.log_tl) + l0;
    const int items = (1 << (log_share - log_step)) << log_sub;  // (row, sub-piece) pairs
    // Eight pieces per thread at a time: their shared (often remote) reads are in flight
    // together instead of one latency each (ncu: the stores waited on those reads). A batch
    // covers whole rows (log_sub <= 3, host check), so piece u of every batch sits at the
    // same offsets from the batch's first row: those are computed once, and a batch moves
    // both pointers by its rows (the per-piece row arithmetic was 60 instructions per piece
    // in the PTX, with a 64-bit multiply and the epilogue's branches per element).
    constexpr int batch = 8;
    const int rows_per_batch = batch >> log_sub;
    const long long row_stride = a.chunks << log_step;  // in Y, between a thread's rows
    int row_of_u[batch], src_of_u[batch];
    long long dst_of_u[batch];
#pragma unroll
    for (int u = 0; u < batch; ++u) {
      const int row = u >> log_sub, q = u & ((1 << log_sub) - 1);
      row_of_u[u] = row << log_step;
      src_of_u[u] = q * (NT * n) * a.ld;
      dst_of_u[u] = row * row_stride + q * (NT * n);
    }
    const bool read_old = a.scale && !a.beta_zero;
    int J = j0 + (t >> (log_pieces - log_sub));  // the batch's first row
    D* y_batch = yc + (long long)J * a.chunks;
    for (int k0 = 0; k0 < items;
         k0 += batch, J += rows_per_batch << log_step, y_batch += rows_per_batch * row_stride) {
      D v[batch][n];
#pragma unroll
      for (int u = 0; u < batch; ++u) {
        if (k0 + u >= items) break;
        const D* s = src + src_of_u[u] + padded<D>(J + row_of_u[u]);
#pragma unroll
        for (int i = 0; i < n; ++i)
          v[u][i] = s[i * a.ld];
      }
#pragma unroll
      for (int u = 0; u < batch; ++u) {
        if (k0 + u >= items) break;
        D* yp = y_batch + dst_of_u[u];
        if (a.scale) {  // the epilogue's arithmetic, its branches once per piece
          D old[n];
          if (read_old) *reinterpret_cast<V*>(old) = *reinterpret_cast<const V*>(yp);
#pragma unroll
          for (int i = 0; i < n; ++i) {
            v[u][i] = mul(a.alpha, v[u][i]);
            if (read_old) v[u][i] = add(v[u][i], mul(a.beta, old[i]));
          }
        }
        *reinterpret_cast<V*>(yp) = *reinterpret_cast<const V*>(v[u]);
      }
    }
  } else {
    const int log_run = a.log_tl + a.log_cluster;
    for (int e = t; e < (1 << (log_share + log_run)); e += NT) {
      const int m = e & ((1 << log_run) - 1), J = j0 + (e >> log_run);
      const int h = m >> a.log_tl, l = m & ((1 << a.log_tl) - 1);
      D* yp = yb + J * a.chunks + m;
      *yp = epilogue(source(h)[l * a.ld + padded<D>(J)], yp, a.scale, a.beta_zero, a.alpha, a.beta);
    }
  }
}

// This CTA's tile of unit `unit`: tile index lt of signal b, loaded by kThreads threads.
template <class D>
__device__ __forceinline__ void load_unit_tile(D* xs, long long unit, int rank, int elements,
                                               const SquareArgs<D>& a) {
  const long long lt = ((unit % a.units_per_signal) << a.log_cluster) + rank;
  load_tile(xs, lt, unit / a.units_per_signal, elements, a);
}

// The factors into shared memory, [step][p][q], by all `threads` threads of the CTA.
template <class D, int P>
__device__ __forceinline__ void load_factors(D* fs, int threads, const SquareArgs<D>& a) {
  for (int e = threadIdx.x; e < a.count * P * P; e += threads) {
    const int s = e / (P * P), p = (e / P) % P, q = e % P;
    fs[e] = factor_value(a.g[s], a.sq[s], a.sp[s], 0, q, p);
  }
}

// Single role. Persistent CTAs, two tile buffers each: the copies of the next tile are in
// flight while the CTA runs the steps on the current one and stores it, so the load latency
// and the shared-memory work overlap (one CTA per SM).
template <class D, int P, int RS, int QT>
__global__ void __launch_bounds__(kThreads, 1) kron_square_kernel(const SquareArgs<D> a) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  D* fs = reinterpret_cast<D*>(shared_raw);  // the factors, [step][p][q]
  const int elements = 1 << (a.log_chunk + a.log_tl);
  D* buffers = fs + a.buffer_offset;  // two of a.buffer_elements
  const int rank = a.log_cluster > 0 ? cluster_block_rank() : 0;
  const long long units = a.units_per_signal * a.B, stride = gridDim.x >> a.log_cluster;
  const int t = int(threadIdx.x);
  long long unit = blockIdx.x >> a.log_cluster;
  if (unit < units) load_unit_tile(buffers, unit, rank, elements, a);
  __pipeline_commit();
  load_factors<D, P>(fs, kThreads, a);
  for (int cur = 0; unit < units; unit += stride, cur ^= 1) {
    D* xs = buffers + cur * a.buffer_elements;
    if (unit + stride < units)
      load_unit_tile(buffers + (cur ^ 1) * a.buffer_elements, unit + stride, rank, elements, a);
    __pipeline_commit();
    __pipeline_wait_prior(1);  // this tile's copies (the group before) have landed
    __syncthreads();
    square_steps<D, P, RS, QT, 0>(xs, fs, a.count, elements, a.log_chunk, a.ld);
    if (a.log_cluster > 0) {
      // Every tile of the unit is done, its writes visible to the cluster (release/acquire).
      cluster_barrier();
      store_unit<D, true, kThreads>(xs, unit, rank, a, t);
      // Every read of this unit's tiles (here and remotely) is done before the next refill.
      // Relaxed: the reads have completed (their values were stored), and a release here
      // made each CTA wait for its global stores to drain (a GPU-wide fence; ncu, session
      // 22: 9 % of the 16^3 pass's stall samples).
      cluster_arrive_relaxed();
      cluster_wait();
    } else {
      store_unit<D, false, kThreads>(xs, unit, rank, a, t);
      __syncthreads();  // read before the next refill
    }
  }
}

// Two roles. Persistent CTAs, one per SM, over a ring of three tile buffers: kThreads "step"
// threads load tiles and apply the factors while kMovers "mover" threads store the tile
// before. Tile i of a CTA is in buffer i % 3, which cycles
//   loaded (full) -> stepped (computed, by every CTA of the cluster) -> stored and read by
//   every CTA (freed) -> loaded again,
// each edge an mbarrier phase. The step threads issue the copies of tile i + 2 right after
// their steps on tile i, so a tile's loads, its steps and the store of the tile before run
// at once; in the single-role kernel they took turns (ncu, session 22: the steps held 44 %
// of the stall samples of a 16^3 pass, loads, stores and barriers the rest). The movers only
// store: when they also loaded, they set the pace (session 54).
constexpr int kMovers = kKronSquareMovers;
constexpr int kRing = kKronSquareMaxBuffers;

template <class D, int P, int RS, int QT>
__global__ void __launch_bounds__(kThreads + kMovers, 1)
    kron_square_roles_kernel(const SquareArgs<D> a) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  __shared__ std::uint64_t full[kRing], computed[kRing], freed[kRing];
  D* fs = reinterpret_cast<D*>(shared_raw);  // the factors, [step][p][q]
  const int elements = 1 << (a.log_chunk + a.log_tl);
  D* buffers = fs + a.buffer_offset;  // kRing of a.buffer_elements
  const int cluster = 1 << a.log_cluster;
  const int rank = a.log_cluster > 0 ? cluster_block_rank() : 0;
  const long long units = a.units_per_signal * a.B, stride = gridDim.x >> a.log_cluster;
  const long long first = blockIdx.x >> a.log_cluster;
  // Every CTA of a cluster takes the same units (its own tile of each), so the same count.
  const long long tiles = first < units ? (units - 1 - first) / stride + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kRing; ++s) {
      mbarrier_init(&full[s], kThreads);  // each step thread's copies
      mbarrier_init(&computed[s], cluster);
      mbarrier_init(&freed[s], cluster);
    }
    mbarrier_init_fence();
  }
  load_factors<D, P>(fs, kThreads + kMovers, a);
  // The barriers initialised (cluster-wide) and the factors in place before either role starts.
  cluster_barrier();
  auto buffer = [&](long long i) { return buffers + int(i % kRing) * a.buffer_elements; };
  auto phase = [](long long i) { return unsigned(i / kRing) & 1; };
  if (threadIdx.x >= kThreads) {
    const int t = int(threadIdx.x) - kThreads;
    for (long long i = 0; i < tiles; ++i) {
      mbarrier_wait(&computed[i % kRing], phase(i));  // every CTA's steps on its tile
      if (a.log_cluster > 0)
        store_unit<D, true, kMovers>(buffer(i), first + i * stride, rank, a, t);
      else
        store_unit<D, false, kMovers>(buffer(i), first + i * stride, rank, a, t);
      if (i + kRing < tiles) {
        // Refill only when every CTA's movers have read this buffer. Relaxed: those reads
        // have completed (their values were stored).
        named_barrier_sync(2, kMovers);
        if (t == 0)
          for (int h = 0; h < cluster; ++h)
            mbarrier_arrive<false>(&freed[i % kRing], h);
      }
    }
  } else {
    auto load = [&](long long i) {
      load_unit_tile(buffer(i), first + i * stride, rank, elements, a);
      mbarrier_arrive_on_copies(&full[i % kRing]);
    };
    for (long long i = 0; i < tiles && i < kRing - 1; ++i)
      load(i);
    for (long long i = 0; i < tiles; ++i) {
      mbarrier_wait(&full[i % kRing], phase(i));
      square_steps<D, P, RS, QT, 0>(buffer(i), fs, a.count, elements, a.log_chunk, a.ld);
      // After the last step's barrier every step thread's writes are done: one release
      // publishes them to the movers of every CTA of the cluster. (racecheck does not follow
      // a release that covers other threads' writes and reports hazards here: see
      // bench/probes/racecheck_mbarrier_probe.cu. An arrival by every step thread and mover,
      // which it follows, made the passes 2-12 % slower on the H100, session 56.)
      if (threadIdx.x == 0)
        for (int h = 0; h < cluster; ++h)
          mbarrier_arrive<true>(&computed[i % kRing], h);
      // Tile i + 2 goes into the buffer of tile i - 1 once every CTA's movers have stored
      // that one (they had this tile's steps to do it).
      const long long next = i + kRing - 1;
      if (next < tiles) {
        if (i >= 1) mbarrier_wait(&freed[(i - 1) % kRing], phase(i - 1));
        load(next);
      }
    }
  }
  // No CTA leaves while another may still read its shared memory or arrive on its barriers.
  cluster_arrive_relaxed();
  cluster_wait();
}

// As many units in flight as the device holds clusters (CTAs: one per SM). The two-role
// kernel only where kron_square_layout may choose it.
template <class D, int P, int RS, int QT>
void launch_square(const SquareArgs<D>& a, const KronSquareLayout& layout, long long units,
                   cudaStream_t stream) {
  const int cluster = 1 << a.log_cluster;
  if constexpr (P <= kKronSquareMoversMaxP) {
    if (layout.movers > 0) {
      launch_persistent_clusters(kron_square_roles_kernel<D, P, RS, QT>, a, cluster,
                                 kThreads + kMovers, layout.bytes, units, stream,
                                 "kron_square_roles_kernel");
      return;
    }
  }
  launch_persistent_clusters(kron_square_kernel<D, P, RS, QT>, a, cluster, kThreads, layout.bytes,
                             units, stream, "kron_square_kernel");
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
  a.B = in.cols;
  a.log_chunk = kron_log2(chunk);
  a.log_tl = kron_log2(tl);
  // Rows of the output get runs of tl values per CTA; below 32 bytes (a DRAM sector: a
  // partly written sector costs far more than a whole one) the CTAs of a cluster pair up.
  const bool pair = tl * Index(sizeof(T)) < 32 && (a.chunks / tl) % 2 == 0 && device_has_clusters();
  a.log_cluster = pair ? 1 : 0;
  a.units_per_signal = a.chunks / tl >> a.log_cluster;
  a.alpha = alpha;
  a.beta = beta;
  a.scale = scale;
  a.beta_zero = beta == T(0);
  const std::size_t shared_limit = shared_memory_per_block();
  const KronSquareLayout layout = kron_square_layout(P, count, tl, sizeof(T), shared_limit);
  // 132-206 KB: a device with less (sm_86/89; sm_80 for a single 2 x 2 factor) leaves the pass
  // to the general fused kernel (the planner priced that one there).
  if (layout.bytes > shared_limit) return false;
  a.ld = layout.ld;
  a.buffer_offset = layout.buffer_offset;
  a.buffer_elements = layout.buffer_elements;
  // The vector store's batches of eight pieces cover whole rows: at most 8 pieces of a row
  // per storing thread (always so for the tile sizes of kron_square_chunks_per_block).
  constexpr Index n = Index(16 / sizeof(T));
  const int storing_threads = layout.movers > 0 ? layout.movers : kThreads;
  const int log_pieces = a.log_tl - kron_log2(n) + a.log_cluster;
  a.vector_store = reinterpret_cast<std::uintptr_t>(out.data) % 16 == 0 &&
                   (in.cols == 1 || out.col_stride % n == 0) &&
                   log_pieces - kron_log2(storing_threads) <= 3;
  const long long units = a.units_per_signal * a.B;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  // RS rows x QT outputs per thread: 64 accumulators in float, 32 in double
  // (kron_square_accumulators); where QT < P a team of P / QT lanes shares the rows. Twice
  // the rows per thread at half the threads (256) measured 0-7 % faster on the H100 than 32 / 16
  // at 512 threads (session 21): each factor load feeds more multiply-adds.
  constexpr bool f32 = sizeof(T) == 4;
  switch (P) {
    case 2:
      launch_square<D, 2, f32 ? 32 : 16, 2>(a, layout, units, stream);
      break;
    case 4:
      launch_square<D, 4, f32 ? 16 : 8, 4>(a, layout, units, stream);
      break;
    case 8:
      launch_square<D, 8, f32 ? 8 : 4, 8>(a, layout, units, stream);
      break;
    case 16:
      launch_square<D, 16, 4, f32 ? 16 : 8>(a, layout, units, stream);
      break;
    default:
      launch_square<D, 32, 4, f32 ? 16 : 8>(a, layout, units, stream);
      break;
  }
  return true;
}

template bool kron_fused_square(std::span<const KronFactorRef<float>>, ConstView<float>,
                                MatrixView<float>, float, float, bool, Context&);
template bool kron_fused_square(std::span<const KronFactorRef<double>>, ConstView<double>,
                                MatrixView<double>, double, double, bool, Context&);

}  // namespace strop::detail
