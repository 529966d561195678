// Device path of block_svd (host code only; a .cu so that the CUDA build compiles it): blocks that
// fit one thread block's shared memory go to our batched Jacobi kernel (jacobi_svd.cu); of the
// rest, many small blocks (both sides <= 32) go to cuSOLVER's gesvdjBatched; larger blocks to
// gesvdaStridedBatched (rank-k SVD of tall blocks, wide ones transposed first); a single block to
// gesvdj. Batches are cut to what cuSOLVER accepts, zero blocks are skipped, and a block cuSOLVER
// reports as failed is redone on the CPU. Needs CUDA::cusolver linked to strop.
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>

#include "factorize/svd/block_svd.hpp"
#include "factorize/svd/jacobi_svd.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_types.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

template <class T>
cusolverStatus_t batched_buffer(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                                int* lwork, gesvdjInfo_t params, int batch) {
  STROP_CUDA_DISPATCH(T, cusolverDnSgesvdjBatched_bufferSize, cusolverDnDgesvdjBatched_bufferSize,
                      cusolverDnCgesvdjBatched_bufferSize, cusolverDnZgesvdjBatched_bufferSize, h,
                      CUSOLVER_EIG_MODE_VECTOR, m, n, as_cuda(a), m, s, as_cuda(u), m, as_cuda(v),
                      n, lwork, params, batch)
}
template <class T>
cusolverStatus_t batched(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                         T* work, int lwork, int* info, gesvdjInfo_t params, int batch) {
  STROP_CUDA_DISPATCH(T, cusolverDnSgesvdjBatched, cusolverDnDgesvdjBatched,
                      cusolverDnCgesvdjBatched, cusolverDnZgesvdjBatched, h,
                      CUSOLVER_EIG_MODE_VECTOR, m, n, as_cuda(a), m, s, as_cuda(u), m, as_cuda(v),
                      n, as_cuda(work), lwork, info, params, batch)
}
template <class T>
cusolverStatus_t single_buffer(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                               int* lwork, gesvdjInfo_t params) {
  STROP_CUDA_DISPATCH(T, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize,
                      cusolverDnCgesvdj_bufferSize, cusolverDnZgesvdj_bufferSize, h,
                      CUSOLVER_EIG_MODE_VECTOR, 1, m, n, as_cuda(a), m, s, as_cuda(u), m,
                      as_cuda(v), n, lwork, params)
}
template <class T>
cusolverStatus_t single(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v, T* work,
                        int lwork, int* info, gesvdjInfo_t params) {
  STROP_CUDA_DISPATCH(T, cusolverDnSgesvdj, cusolverDnDgesvdj, cusolverDnCgesvdj, cusolverDnZgesvdj,
                      h, CUSOLVER_EIG_MODE_VECTOR, 1, m, n, as_cuda(a), m, s, as_cuda(u), m,
                      as_cuda(v), n, as_cuda(work), lwork, info, params)
}
template <class T>
cusolverStatus_t approx_buffer(cusolverDnHandle_t h, int rank, int m, int n, const T* a,
                               const RealOf<T>* s, const T* u, const T* v, int* lwork, int batch) {
  STROP_CUDA_DISPATCH(
      T, cusolverDnSgesvdaStridedBatched_bufferSize, cusolverDnDgesvdaStridedBatched_bufferSize,
      cusolverDnCgesvdaStridedBatched_bufferSize, cusolverDnZgesvdaStridedBatched_bufferSize, h,
      CUSOLVER_EIG_MODE_VECTOR, rank, m, n, as_cuda(a), m, static_cast<long long>(m) * n, s, rank,
      as_cuda(u), m, static_cast<long long>(m) * rank, as_cuda(v), n,
      static_cast<long long>(n) * rank, lwork, batch)
}
template <class T>
cusolverStatus_t approx(cusolverDnHandle_t h, int rank, int m, int n, const T* a, RealOf<T>* s,
                        T* u, T* v, T* work, int lwork, int* info, double* residual, int batch) {
  STROP_CUDA_DISPATCH(T, cusolverDnSgesvdaStridedBatched, cusolverDnDgesvdaStridedBatched,
                      cusolverDnCgesvdaStridedBatched, cusolverDnZgesvdaStridedBatched, h,
                      CUSOLVER_EIG_MODE_VECTOR, rank, m, n, as_cuda(a), m,
                      static_cast<long long>(m) * n, s, rank, as_cuda(u), m,
                      static_cast<long long>(m) * rank, as_cuda(v), n,
                      static_cast<long long>(n) * rank, as_cuda(work), lwork, info, residual, batch)
}

// gesvdj's parameters, on the context's cuSOLVER handle (bound to its stream).
struct Solver {
  explicit Solver(Context& ctx) : handle(static_cast<cusolverDnHandle_t>(ctx.cusolver())) {
    check_cusolver(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
  }
  ~Solver() { cusolverDnDestroyGesvdjInfo(params); }
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;
  cusolverDnHandle_t handle = nullptr;
  gesvdjInfo_t params = nullptr;
};

template <class T>
std::vector<T> download(const Buffer<T>& b, Context& ctx) {
  std::vector<T> host(static_cast<std::size_t>(b.size()));
  copy_bytes(host.data(), MemorySpace::Host, b.data(), MemorySpace::Device, sizeof(T) * host.size(),
             ctx);
  return host;
}
template <class T>
Buffer<T> upload(const std::vector<T>& host, Context& ctx) {
  Buffer<T> b(static_cast<Index>(host.size()), MemorySpace::Device, ctx);
  copy_bytes(b.data(), MemorySpace::Device, host.data(), MemorySpace::Host, sizeof(T) * host.size(),
             ctx);
  return b;
}

// Copies the leading `keep` singular triples of block q (U: m x ldu_cols, V: n x ldv_cols,
// both column-major; V holds right singular vectors, not V^H) into `out`.
template <class T>
void take(BlockSvd<T>& out, Index q, const T* u, const RealOf<T>* s, const T* v, Index keep,
          bool swapped) {
  const Index m = out.rows, n = out.cols, r = out.rank;
  T* U = out.u_block(q);
  T* VH = out.vh_block(q);
  RealOf<T>* S = out.s.data() + q * r;
  for (Index t = 0; t < keep; ++t) {
    S[t] = s[t];
    // swapped: the SVD was of the block's adjoint, so its U is our V and its V our U.
    for (Index i = 0; i < m; ++i)
      U[i + t * m] = swapped ? v[i + t * m] : u[i + t * m];
    for (Index j = 0; j < n; ++j)
      VH[t + j * r] = strop::conj(swapped ? u[j + t * n] : v[j + t * n]);
  }
}

// The triples of one batch of blocks as cuSOLVER returns them, on the host: block b's U at
// u + b * rows * ucols, V (not V^H) at v + b * cols * vcols, singular values at s + b * scount.
template <class T>
struct BatchTriples {
  std::vector<T> u, v;
  std::vector<RealOf<T>> s;
  std::vector<int> info;  // 0 where the block converged
  Index ucols = 0, vcols = 0, scount = 0;
};

// Jacobi: all triples of `batch` m x n blocks (used for m, n <= 32, or a single block).
template <class T>
BatchTriples<T> jacobi_triples(const std::vector<T>& blocks, Index batch, Index m, Index n,
                               Solver& solver, Context& ctx) {
  using Real = RealOf<T>;
  const Index k = std::min(m, n);
  const int im = int(m), in = int(n), count = int(batch);
  Buffer<T> a = upload(blocks, ctx);
  Buffer<Real> s(batch * k, MemorySpace::Device, ctx);
  // All of U and V (econ off for the batched form).
  Buffer<T> u(batch * m * m, MemorySpace::Device, ctx), v(batch * n * n, MemorySpace::Device, ctx);
  Buffer<int> info(batch, MemorySpace::Device, ctx);
  int lwork = 0;
  if (batch == 1) {
    check_cusolver(single_buffer(solver.handle, im, in, a.data(), s.data(), u.data(), v.data(),
                                 &lwork, solver.params),
                   "gesvdj_bufferSize");
    Buffer<T> work(lwork, MemorySpace::Device, ctx);
    check_cusolver(single(solver.handle, im, in, a.data(), s.data(), u.data(), v.data(),
                          work.data(), lwork, info.data(), solver.params),
                   "gesvdj");
    ctx.synchronize();
  } else {
    check_cusolver(batched_buffer(solver.handle, im, in, a.data(), s.data(), u.data(), v.data(),
                                  &lwork, solver.params, count),
                   "gesvdjBatched_bufferSize");
    Buffer<T> work(lwork, MemorySpace::Device, ctx);
    check_cusolver(batched(solver.handle, im, in, a.data(), s.data(), u.data(), v.data(),
                           work.data(), lwork, info.data(), solver.params, count),
                   "gesvdjBatched");
    ctx.synchronize();
  }
  return {download(u, ctx), download(v, ctx), download(s, ctx), download(info, ctx), m, n, k};
}

// gesvda: the leading `keep` triples of `batch` tall (m >= n) blocks; nothing when the
// batch's workspace is more than one call can take (its 32-bit size overflows: cuSOLVER
// answers INVALID_VALUE), so that the caller splits it.
template <class T>
std::optional<BatchTriples<T>> approximate_triples(const std::vector<T>& blocks, Index batch,
                                                   Index m, Index n, Index keep, Solver& solver,
                                                   Context& ctx) {
  using Real = RealOf<T>;
  const int im = int(m), in = int(n), rank = int(keep), count = int(batch);
  Buffer<T> a = upload(blocks, ctx);
  Buffer<Real> s(batch * keep, MemorySpace::Device, ctx);
  Buffer<T> u(batch * m * keep, MemorySpace::Device, ctx),
      v(batch * n * keep, MemorySpace::Device, ctx);
  Buffer<int> info(batch, MemorySpace::Device, ctx);
  int lwork = 0;
  const cusolverStatus_t sized = approx_buffer(solver.handle, rank, im, in, a.data(), s.data(),
                                               u.data(), v.data(), &lwork, count);
  if (sized == CUSOLVER_STATUS_INVALID_VALUE && batch > 1) return std::nullopt;
  check_cusolver(sized, "gesvdaStridedBatched_bufferSize");
  Buffer<T> work(lwork, MemorySpace::Device, ctx);
  std::vector<double> residual(static_cast<std::size_t>(batch));
  check_cusolver(approx(solver.handle, rank, im, in, a.data(), s.data(), u.data(), v.data(),
                        work.data(), lwork, info.data(), residual.data(), count),
                 "gesvdaStridedBatched");
  ctx.synchronize();
  return BatchTriples<T>{
      download(u, ctx), download(v, ctx), download(s, ctx), download(info, ctx), keep, keep, keep};
}

// Blocks per cuSOLVER call to start with: at most 2048 and about 2^24 values, which keeps the
// device buffers moderate; gesvda's 32-bit workspace size may still overflow (16384 blocks of
// 128 x 128 did, 2048 of 256 x 256 too), and then the batch is halved.
Index batch_limit(Index m, Index n) {
  return std::clamp<Index>((Index(1) << 24) / std::max<Index>(m * n, 1), 1, 2048);
}

}  // namespace

template <class T>
void block_svd_cuda(const std::vector<T>& blocks, BlockSvd<T>& out, Context& ctx) {
  require<DeviceError>(cuda_available(), "factorize: Device::cuda requested, no CUDA device");
  const Index count = out.count, m = out.rows, n = out.cols, k = std::min(m, n);
  const Index keep = std::min(out.rank, k);
  if (count == 0 || keep == 0) return;
  // One large block keeps one multiprocessor busy in our kernel: cuSOLVER uses them all.
  if (jacobi_svd_fits(m, n, sizeof(T)) && (count > 1 || k <= 64)) {
    const Buffer<T> device_blocks = upload(blocks, ctx);
    jacobi_block_svd_cuda<T>({device_blocks.data(), m}, out, ctx);
    return;
  }
  Solver solver(ctx);
  // Zero blocks keep the zero triples `out` starts with: nothing to factor (and gesvda
  // reports them as failed, info 1).
  std::vector<double> norms(static_cast<std::size_t>(count), 0.0);
  std::vector<Index> live;
  for (Index q = 0; q < count; ++q) {
    for (Index e = 0; e < m * n; ++e)
      norms[q] += double(std::norm(blocks[static_cast<std::size_t>(q * m * n + e)]));
    if (norms[q] > 0) {
      live.push_back(q);
    } else {
      out.dropped[static_cast<std::size_t>(q)] = 0;
    }
  }
  const bool jacobi = live.size() == 1 || (m <= 32 && n <= 32);
  // gesvda needs tall blocks: factor the adjoint of wide ones.
  const bool swapped = !jacobi && m < n;
  const Index fm = swapped ? n : m, fn = swapped ? m : n;  // the shape actually factored
  Index limit = batch_limit(m, n);
  std::vector<Index> failed;
  const Index live_count = static_cast<Index>(live.size());
  for (Index first = 0; first < live_count;) {
    const Index batch = std::min(limit, live_count - first);
    std::vector<T> chunk(static_cast<std::size_t>(batch * m * n));
    for (Index b = 0; b < batch; ++b) {
      const T* block = blocks.data() + live[static_cast<std::size_t>(first + b)] * m * n;
      T* to = chunk.data() + b * m * n;
      for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i)
          to[swapped ? j + i * n : i + j * m] =
              swapped ? strop::conj(block[i + j * m]) : block[i + j * m];
    }
    const std::optional<BatchTriples<T>> triples =
        jacobi ? jacobi_triples(chunk, batch, m, n, solver, ctx)
               : approximate_triples(chunk, batch, fm, fn, keep, solver, ctx);
    if (!triples) {
      limit = batch / 2;
      continue;
    }
    const BatchTriples<T>& t = *triples;
    for (Index b = 0; b < batch; ++b) {
      const Index q = live[static_cast<std::size_t>(first + b)];
      if (t.info[static_cast<std::size_t>(b)] != 0) {
        failed.push_back(q);
        continue;
      }
      const RealOf<T>* sq = t.s.data() + b * t.scount;
      take(out, q, t.u.data() + b * fm * t.ucols, sq, t.v.data() + b * fn * t.vcols, keep, swapped);
      double kept = 0;
      for (Index i = 0; i < keep; ++i)
        kept += double(sq[i]) * double(sq[i]);
      out.dropped[static_cast<std::size_t>(q)] = std::max(0.0, norms[q] - kept);
    }
    first += batch;
  }
  // What cuSOLVER reports as not converged is redone exactly on the CPU.
  for (Index q : failed)
    out.dropped[static_cast<std::size_t>(q)] =
        truncated_svd_cpu(blocks.data() + q * m * n, m, n, out.rank, out.u_block(q),
                          out.s.data() + q * out.rank, out.vh_block(q));
}

#define STROP_INSTANTIATE(T) \
  template void block_svd_cuda(const std::vector<T>&, BlockSvd<T>&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
