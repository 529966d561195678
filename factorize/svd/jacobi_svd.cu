// Batched one-sided (Hestenes) Jacobi SVD, one thread block per matrix block.
//
// The block, or its adjoint when it is wide, is loaded as G (p x q, p >= q) into shared
// memory with V = I (q x q). Each sweep visits every column pair (i, j) once, in q - 1
// rounds of q/2 disjoint pairs (the round-robin tournament), so a round's pairs rotate in
// parallel: a team of threads per pair forms alpha = |g_i|^2, beta = |g_j|^2 and
// gamma = g_i^H g_j and, when gamma is not negligible, applies the rotation that makes
// g_i and g_j orthogonal to both G and V. At convergence G = U S, so the column norms are
// the singular values. One-sided Jacobi is accurate to the last digits, also for the small
// singular values whose squares a Gram matrix would lose, which is what exact recovery of
// butterflies and Monarch matrices needs.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>
#include <vector>

#include "factorize/svd/jacobi_svd.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

constexpr int kMaxSweeps = 40;
constexpr int kScratch = 32;  // doubles for block-wide reductions (one per warp)

struct Shape {
  long long rows, cols, rank;
  long long p, q;  // the factored orientation: p x q, p >= q
  int team;        // threads per column pair (a power of two <= 32)
  bool adjoint;    // G = A^H (the block is wide)
};

__host__ __device__ inline long long pad_even(long long q) {
  return q + (q & 1);
}

// Shared memory, in this order: reduction scratch, the column norms and their order, G
// (p x q, leading dimension p + 1 against bank conflicts between columns). Each part
// starts on 16 bytes (complex<double> loads).
__host__ __device__ inline long long aligned16(long long bytes) {
  return (bytes + 15) / 16 * 16;
}
__host__ __device__ inline long long g_offset(long long q) {
  return aligned16(sizeof(double) * kScratch) + aligned16(sizeof(double) * q) +
         aligned16(sizeof(int) * q);
}
std::size_t shared_bytes(long long p, long long q, std::size_t scalar_bytes) {
  return static_cast<std::size_t>(g_offset(q)) + scalar_bytes * (p + 1) * q;
}

// |z|^2 and |z|.
template <class R>
__device__ __forceinline__ R norm2(R a) {
  return a * a;
}
template <class R>
__device__ __forceinline__ R norm2(DeviceComplex<R> a) {
  return a.re * a.re + a.im * a.im;
}
template <class R>
__device__ __forceinline__ R scale(R a, R s) {
  return a * s;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> scale(DeviceComplex<R> a, R s) {
  return {a.re * s, a.im * s};
}
// a / g, componentwise: gamma / |gamma| this way stays finite when |gamma| is subnormal,
// where gamma * (1 / |gamma|) overflows (1 / 2e-41 is beyond the float range).
template <class R>
__device__ __forceinline__ R divide(R a, R g) {
  return a / g;
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> divide(DeviceComplex<R> a, R g) {
  return {a.re / g, a.im / g};
}
template <class R>
__device__ __forceinline__ R magnitude(R a) {
  return fabs(a);
}
template <class R>
__device__ __forceinline__ R magnitude(DeviceComplex<R> a) {
  return hypot(a.re, a.im);
}
template <class R>
__device__ __forceinline__ bool finite(R a) {
  return isfinite(a);
}
template <class R>
__device__ __forceinline__ bool finite(DeviceComplex<R> a) {
  return isfinite(a.re) && isfinite(a.im);
}
template <class D>
struct RealOfDevice {
  using type = D;
};
template <class R>
struct RealOfDevice<DeviceComplex<R>> {
  using type = R;
};

// Sum over the block of one double per thread (every thread gets the result).
__device__ double block_sum(double v, double* scratch) {
  for (int m = 16; m > 0; m >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, m);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < warps; ++w)
    total += scratch[w];
  return total;
}

// Pair k of round r of the round-robin tournament on n (even) players: player 0 stays,
// the others turn; every pair meets exactly once in n - 1 rounds.
__device__ __forceinline__ void tournament_pair(int r, int k, int n, int& i, int& j) {
  const int m = n - 1;
  if (k == 0) {
    i = 0;
    j = r % m + 1;
  } else {
    i = (r + k) % m + 1;
    j = (r - k + m) % m + 1;
  }
}

// Entry (i, l) of the block read in place.
template <class D>
__device__ __forceinline__ D block_entry(const DeviceBlocks<D>& in, long long r0, long long c0,
                                         long long i, long long l) {
  return in.base[(r0 + i * in.row_stride) + (c0 + l * in.col_stride) * in.ld];
}

// Thread block b factors block slots[first + b] (block first + b without slots).
template <class D>
__global__ void jacobi_svd_kernel(Shape sh, DeviceBlocks<D> in, const Index* slots, long long first,
                                  D* u_out, typename RealOfDevice<D>::type* s_out, D* vh_out,
                                  double* dropped_out, double* norm2_out, int* nonfinite) {
  using R = typename RealOfDevice<D>::type;
  extern __shared__ __align__(16) unsigned char shared[];
  const long long p = sh.p, q = sh.q, ldg = p + 1;
  double* scratch = reinterpret_cast<double*>(shared);
  double* norms = reinterpret_cast<double*>(shared + aligned16(sizeof(double) * kScratch));
  int* order = reinterpret_cast<int*>(shared + aligned16(sizeof(double) * kScratch) +
                                      aligned16(sizeof(double) * q));
  D* G = reinterpret_cast<D*>(shared + g_offset(q));
  __shared__ int rotated;

  const long long block = slots ? slots[first + blockIdx.x] : first + blockIdx.x;
  const long long m = sh.rows, n = sh.cols;
  const long long r0 = in.row0 ? in.row0[block] : 0;
  const long long c0 = in.col0 ? in.col0[block] : block * n;
  const int tid = threadIdx.x;

  // Load (consecutive threads read consecutive rows: coalesced for unit row stride).
  double local = 0;
  bool ok = true;
  for (long long e = tid; e < m * n; e += blockDim.x) {
    const long long i = e % m, j = e / m;
    const D a = block_entry(in, r0, c0, i, j);
    ok = ok && finite(a);
    local += double(norm2(a));
    if (sh.adjoint) {
      G[j + i * ldg] = conjugate(a);
    } else {
      G[i + j * ldg] = a;
    }
  }
  const double total = block_sum(local, scratch);
  if (__syncthreads_or(!ok)) {  // NaN/Inf: nothing to factor, the caller raises
    if (tid == 0) atomicExch(nonfinite, 1);
    return;
  }

  // Sweeps until no pair needed a rotation. The squared column norms are recomputed at
  // each sweep and updated in between (alpha' = alpha - t |gamma|, beta' = beta + t |gamma|,
  // as LAPACK's xGESVJ does), so a pair costs one dot product instead of three.
  const R eps = sizeof(R) == sizeof(float) ? R(FLT_EPSILON) : R(DBL_EPSILON);
  const R tolerance = sqrt(R(p)) * eps, significant = R(p) * eps;
  const int players = int(pad_even(q)), pairs = players / 2;
  const int team = sh.team, lane = tid % team, teams = blockDim.x / team;
  const unsigned team_mask =
      team == 32 ? 0xffffffffu : ((1u << team) - 1u) << ((tid % 32) / team * team);
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    for (long long j = tid; j < q; j += blockDim.x) {
      R sum = 0;
      for (long long r = 0; r < p; ++r)
        sum += norm2(G[r + j * ldg]);
      norms[j] = double(sum);
    }
    if (tid == 0) rotated = 0;
    __syncthreads();
    for (int round = 0; round < players - 1; ++round) {
      for (int first = 0; first < pairs; first += teams) {
        const int k = first + tid / team;
        int i = 0, j = 0;
        if (k < pairs) tournament_pair(round, k, players, i, j);
        const bool active = k < pairs && i < q && j < q;
        D gamma{};
        R alpha = 0, beta = 0;
        if (active) {
          const D* gi = G + i * ldg;
          const D* gj = G + j * ldg;
          for (long long r = lane; r < p; r += team)
            multiply_add(gamma, conjugate(gi[r]), gj[r]);
          alpha = R(norms[i]);
          beta = R(norms[j]);
        }
        for (int mask = team / 2; mask > 0; mask >>= 1)
          gamma = add(gamma, shfl_xor(gamma, mask));
        const R g = magnitude(gamma);
        // Rotate unless g_i and g_j are orthogonal to working precision (sqrt(p) eps, as in
        // LAPACK's xGESVJ: the derived side U^H A needs U orthonormal to that level). Only a
        // rotation above p eps, the rounding bound of the computed gamma, asks for another
        // sweep: orthogonal columns of equal norms otherwise rotate by 45 degrees on rounding
        // noise sweep after sweep, degrading them.
        const R cosine = g / (sqrt(alpha) * sqrt(beta));
        const bool rotate = active && g > R(0) && cosine > tolerance;
        if (rotate) {
          // The rotation that zeroes the (i, j) entry of the 2 x 2 Gram matrix: with
          // e = gamma / |gamma|, g_i' = c g_i - s conj(e) g_j, g_j' = s e g_i + c g_j.
          const R zeta = (beta - alpha) / (2 * g);
          const R t = copysign(R(1), zeta) / (fabs(zeta) + hypot(R(1), zeta));
          const R c = R(1) / sqrt(R(1) + t * t), s = c * t;
          // Not gamma * (s / g): two residual columns of a rank-deficient float block meet
          // with |gamma| ~ 1e-41 and s = 0.7, and s / g overflows to Inf (then NaN in G).
          const D se = scale(divide(gamma, g), s), sec = conjugate(se);
          D* gi = G + i * ldg;
          D* gj = G + j * ldg;
          for (long long r = lane; r < p; r += team) {
            const D x = gi[r], y = gj[r];
            gi[r] = add(scale(x, c), scale(mul(sec, y), R(-1)));
            gj[r] = add(mul(se, x), scale(y, c));
          }
          __syncwarp(team_mask);  // the team has read norms[i], norms[j]
          if (lane == 0) {
            norms[i] = double(max(alpha - t * g, R(0)));
            norms[j] = double(beta + t * g);
            if (cosine > significant) rotated = 1;
          }
        }
      }
      __syncthreads();
    }
    const bool again = rotated != 0;
    __syncthreads();  // everyone has read the flag before the next sweep resets it
    if (!again) break;
  }

  // Singular values are the column norms; rank them (ties by index).
  for (long long j = tid; j < q; j += blockDim.x) {
    double sum = 0;
    for (long long r = 0; r < p; ++r)
      sum += double(norm2(G[r + j * ldg]));
    norms[j] = sqrt(sum);
  }
  // Identity first, so that order[] holds valid columns even if the ranking below had ties
  // it cannot break (NaN norms): a garbage index would read outside shared memory.
  for (long long j = tid; j < q; j += blockDim.x)
    order[j] = int(j);
  __syncthreads();
  for (long long j = tid; j < q; j += blockDim.x) {
    int position = 0;
    for (long long k = 0; k < q; ++k)
      position += norms[k] > norms[j] || (norms[k] == norms[j] && k < j);
    order[position] = int(j);
  }
  __syncthreads();

  // G = A V (or A^H V) has orthogonal columns g_t = sigma_t w_t: the normalized columns are
  // one side's singular vectors, orthonormal to working precision whatever sigma_t (the
  // strength of one-sided Jacobi). The other side comes from the block itself: with the
  // block tall, U = W and S V^H = U^H A; wide, V = W and U S = A V. So V (or U) is never
  // accumulated: half the rotation work and half the shared memory. Triples below rounding
  // of the largest are dropped (their vectors are noise; their energy is counted).
  const long long rank = sh.rank, keep = rank < q ? rank : q;
  const double negligible = norms[order[0]] * double(p) * double(eps);
  D* u = u_out + block * m * rank;
  D* vh = vh_out + block * rank * n;
  const long long side = sh.adjoint ? m : n;  // length of the vectors derived from A
  // W's columns: u (tall) or the rows of vh (wide), written as they are.
  for (long long e = tid; e < p * rank; e += blockDim.x) {
    const long long r = e % p, t = e / p;
    D value{};
    if (t < keep && norms[order[t]] > negligible) {
      const int j = order[t];
      value = scale(G[r + j * ldg], R(1.0 / norms[j]));
    }
    if (sh.adjoint) {
      vh[t + r * rank] = conjugate(value);
    } else {
      u[r + t * m] = value;
    }
  }
  // The derived side, from the block read again: row t of V^H = (u_t^H A) / sigma_t (tall),
  // or u_t = (A v_t) / sigma_t (wide), with u_t or v_t = G[:, j] / sigma_t.
  for (long long e = tid; e < side * rank; e += blockDim.x) {
    const long long x = e % side, t = e / side;
    D value{};
    if (t < keep && norms[order[t]] > negligible) {
      const int j = order[t];
      const R inverse = R(1.0 / norms[j]);
      D sum{};
      for (long long r = 0; r < p; ++r) {
        if (sh.adjoint) {  // (A v_t)[x] = sum_r A[x, r] G[r, j] / sigma
          multiply_add(sum, block_entry(in, r0, c0, x, r), G[r + j * ldg]);
        } else {  // (u_t^H A)[x] = sum_r conj(G[r, j]) A[r, x] / sigma
          multiply_add(sum, conjugate(G[r + j * ldg]), block_entry(in, r0, c0, r, x));
        }
      }
      value = scale(scale(sum, inverse), inverse);  // 1 / sigma^2 may overflow a float
    }
    if (sh.adjoint) {
      u[x + t * m] = value;
    } else {
      vh[t + x * rank] = value;
    }
  }
  for (long long t = tid; t < rank; t += blockDim.x) {
    const bool kept = t < keep && norms[order[t]] > negligible;
    s_out[block * rank + t] = kept ? R(norms[order[t]]) : R(0);
  }
  double tail = 0;
  for (long long t = tid; t < q; t += blockDim.x) {
    const double sigma = norms[order[t]];
    if (t >= keep || !(sigma > negligible)) tail += sigma * sigma;
  }
  tail = block_sum(tail, scratch);
  if (tid == 0) {
    dropped_out[block] = tail;
    norm2_out[block] = total;
  }
}

int threads_for(long long q) {
  return q > 64 ? 512 : 256;
}

int team_for(long long q, int threads) {
  const long long pairs = pad_even(q) / 2;
  int team = 32;
  while (team > 1 && team * pairs > threads)
    team /= 2;
  return team;
}

// The kernel's static shared memory (the same for every scalar type), which the opt-in limit
// covers together with the dynamic part (cudaFuncSetAttribute refuses more).
std::size_t static_shared_bytes() {
  static const std::size_t bytes = [] {
    cudaFuncAttributes attributes{};
    check_cuda(cudaFuncGetAttributes(&attributes, jacobi_svd_kernel<double>),
               "cudaFuncGetAttributes(jacobi_svd_kernel)");
    return attributes.sharedSizeBytes;
  }();
  return bytes;
}

}  // namespace

bool jacobi_svd_fits(Index rows, Index cols, std::size_t scalar_bytes) {
  const long long p = std::max(rows, cols), q = std::min(rows, cols);
  return q >= 1 &&
         shared_bytes(p, q, scalar_bytes) + static_shared_bytes() <= shared_memory_per_block();
}

namespace {

// One batched SVD: the device outputs, launches over ranges of blocks, the download.
template <class T>
class JacobiRun {
 public:
  using D = DeviceScalar<T>;
  using R = RealOf<T>;

  JacobiRun(const BlockSvd<T>& out, Context& ctx)
      : ctx_(ctx),
        stream_(static_cast<cudaStream_t>(ctx.stream())),
        u_(out.count * out.rows * out.rank, MemorySpace::Device, ctx),
        s_(out.count * out.rank, MemorySpace::Device, ctx),
        vh_(out.count * out.rank * out.cols, MemorySpace::Device, ctx),
        dropped_(out.count, MemorySpace::Device, ctx),
        norms_(out.count, MemorySpace::Device, ctx),
        nonfinite_(1, MemorySpace::Device, ctx) {
    const long long m = out.rows, n = out.cols;
    require<DeviceError>(jacobi_svd_fits(m, n, sizeof(T)), "jacobi_block_svd: ", m, "x", n,
                         " blocks do not fit in shared memory");
    shape_ = {m, n, out.rank, std::max(m, n), std::min(m, n), 0, m < n};
    threads_ = threads_for(shape_.q);
    shape_.team = team_for(shape_.q, threads_);
    bytes_ = shared_bytes(shape_.p, shape_.q, sizeof(D));
    check_cuda(cudaMemsetAsync(nonfinite_.data(), 0, sizeof(int), stream_), "cudaMemsetAsync");
    // Only raises the kernel's limit: another thread's smaller setting between this and the
    // launches would make them fail (cuda_check.hpp).
    allow_dynamic_shared_memory(jacobi_svd_kernel<D>, bytes_, "jacobi_svd_kernel: shared memory");
  }

  // Factors blocks slots[first, first + count) (blocks first.. without slots), on the
  // context's stream.
  void launch(const DeviceBlocks<T>& blocks, const Index* slots, long long first, long long count) {
    const DeviceBlocks<D> in{reinterpret_cast<const D*>(blocks.base),
                             blocks.ld,
                             blocks.row0,
                             blocks.col0,
                             blocks.row_stride,
                             blocks.col_stride};
    constexpr long long kMaxGrid = 2147483647LL;  // a grid dimension's limit
    for (long long at = first; at < first + count; at += kMaxGrid) {
      const long long grid = std::min(kMaxGrid, first + count - at);
      jacobi_svd_kernel<D><<<static_cast<unsigned>(grid), threads_, bytes_, stream_>>>(
          shape_, in, slots, at, reinterpret_cast<D*>(u_.data()), s_.data(),
          reinterpret_cast<D*>(vh_.data()), dropped_.data(), norms_.data(), nonfinite_.data());
      check_launch("jacobi_svd_kernel");
    }
  }

  // Waits, checks for NaN/Inf, fills `out`; returns the blocks' total squared norm.
  double finish(BlockSvd<T>& out) {
    int bad = 0;
    copy_bytes(&bad, MemorySpace::Host, nonfinite_.data(), MemorySpace::Device, sizeof(int), ctx_);
    require<NumericalError>(bad == 0, "factorize: the matrix holds NaN or Inf");
    download(out.u.data(), u_);
    download(out.s.data(), s_);
    download(out.vh.data(), vh_);
    download(out.dropped.data(), dropped_);
    std::vector<double> block_norms(static_cast<std::size_t>(out.count));
    download(block_norms.data(), norms_);
    double total = 0;
    for (double v : block_norms)
      total += v;
    return total;
  }

 private:
  template <class V>
  void download(V* host, const Buffer<V>& device) {
    copy_bytes(host, MemorySpace::Host, device.data(), MemorySpace::Device,
               sizeof(V) * static_cast<std::size_t>(device.size()), ctx_);
  }

  Context& ctx_;
  cudaStream_t stream_;
  Buffer<T> u_;
  Buffer<R> s_;
  Buffer<T> vh_;
  Buffer<double> dropped_, norms_;
  Buffer<int> nonfinite_;
  Shape shape_{};
  int threads_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace

template <class T>
double jacobi_block_svd_cuda(const DeviceBlocks<T>& blocks, BlockSvd<T>& out, Context& ctx) {
  if (out.count == 0) return 0;
  JacobiRun<T> run(out, ctx);
  run.launch(blocks, nullptr, 0, out.count);
  return run.finish(out);
}

namespace {

// A second stream for the upload, on the context's device. Destruction waits for the
// copies queued on it, so that the memory they write is not freed under them.
class CopyStream {
 public:
  CopyStream() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CopyStream() {
    cudaStreamSynchronize(stream_);
    cudaEventDestroy(event_);
    cudaStreamDestroy(stream_);
  }
  CopyStream(const CopyStream&) = delete;
  CopyStream& operator=(const CopyStream&) = delete;

  // `to` waits, on the device, for everything queued on `from` so far.
  void order(cudaStream_t from, cudaStream_t to) {
    check_cuda(cudaEventRecord(event_, from), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(to, event_, 0), "cudaStreamWaitEvent");
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t event_ = nullptr;
};

// Upload panels: about 16 MB each, at most 8 (a launch per panel; the first panel's
// copy is the part that cannot overlap).
Index panel_count(Index bytes) {
  return std::clamp<Index>(bytes / (Index(16) << 20), 1, 8);
}

}  // namespace

template <class T>
double jacobi_block_svd_from_host(const StridedBlocks<T>& blocks, BlockSvd<T>& out, Context& ctx) {
  const Index count = out.count, ld = blocks.matrix_rows, width = blocks.matrix_cols;
  if (count == 0) return 0;
  // The blocks in the order in which their last column arrives.
  auto last_column = [&](Index q) {
    return blocks.col0[static_cast<std::size_t>(q)] + (blocks.cols - 1) * blocks.col_stride;
  };
  std::vector<Index> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), Index(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](Index a, Index b) { return last_column(a) < last_column(b); });

  JacobiRun<T> run(out, ctx);
  Buffer<T> matrix(ld * width, MemorySpace::Device, ctx);
  Buffer<Index> row0(count, MemorySpace::Device, ctx), col0(count, MemorySpace::Device, ctx),
      slots(count, MemorySpace::Device, ctx);
  copy_bytes(row0.data(), MemorySpace::Device, blocks.row0.data(), MemorySpace::Host,
             sizeof(Index) * count, ctx);
  copy_bytes(col0.data(), MemorySpace::Device, blocks.col0.data(), MemorySpace::Host,
             sizeof(Index) * count, ctx);
  copy_bytes(slots.data(), MemorySpace::Device, order.data(), MemorySpace::Host,
             sizeof(Index) * count, ctx);
  const DeviceBlocks<T> in_place{matrix.data(),    ld, row0.data(), col0.data(), blocks.row_stride,
                                 blocks.col_stride};

  // The column panels of the (column-major) matrix go up on a second stream while the
  // blocks of the panels already there are factored: the upload of pageable memory is as
  // long as the factorization at 4096 x 4096, so this nearly halves the time.
  const auto main = static_cast<cudaStream_t>(ctx.stream());
  CopyStream copies;  // declared after `matrix`: destroyed (and drained) before it is freed
  copies.order(main, copies.get());  // `matrix` may be pool memory that queued work frees
  const Index panels = panel_count(Index(sizeof(T)) * ld * width);
  Index launched = 0;
  for (Index panel = 0; panel < panels; ++panel) {
    const Index begin = width * panel / panels, end = width * (panel + 1) / panels;
    check_cuda(cudaMemcpyAsync(matrix.data() + begin * ld, blocks.matrix + begin * ld,
                               sizeof(T) * static_cast<std::size_t>((end - begin) * ld),
                               cudaMemcpyHostToDevice, copies.get()),
               "cudaMemcpyAsync (matrix panel)");
    copies.order(copies.get(), main);
    Index ready = launched;
    while (ready < count && last_column(order[static_cast<std::size_t>(ready)]) < end)
      ++ready;
    if (ready > launched) run.launch(in_place, slots.data(), launched, ready - launched);
    launched = ready;
  }
  return run.finish(out);
}

#define STROP_INSTANTIATE(T)                                                             \
  template double jacobi_block_svd_cuda(const DeviceBlocks<T>&, BlockSvd<T>&, Context&); \
  template double jacobi_block_svd_from_host(const StridedBlocks<T>&, BlockSvd<T>&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
