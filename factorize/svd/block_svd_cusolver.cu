// cuSOLVER path of block_svd (host code only; a .cu so that the CUDA build compiles it): many small
// blocks (both sides <= 32) go to gesvdjBatched (Jacobi, all blocks in one launch); larger blocks
// to gesvdaStridedBatched (rank-k SVD of tall blocks, wide ones transposed first); a single block
// to gesvdj. Needs CUDA::cusolver linked to strop.
#include <cusolverDn.h>

#include <cmath>
#include <complex>

#include "factorize/svd/block_svd.hpp"
#include "runtime/cuda_check.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw DeviceError(concat(what, ": cuSOLVER status ", static_cast<int>(status)));
}

// cuSOLVER's spelling of each scalar type.
template <class T>
struct Cu;
template <>
struct Cu<float> {
  using type = float;
};
template <>
struct Cu<double> {
  using type = double;
};
template <>
struct Cu<std::complex<float>> {
  using type = cuComplex;
};
template <>
struct Cu<std::complex<double>> {
  using type = cuDoubleComplex;
};
template <class T>
auto* cu(T* p) {
  return reinterpret_cast<typename Cu<T>::type*>(p);
}
template <class T>
auto* cu(const T* p) {
  return reinterpret_cast<const typename Cu<T>::type*>(p);
}

#define STROP_DISPATCH(T, S, D, C, Z, ...)                       \
  if constexpr (std::is_same_v<T, float>) {                      \
    return S(__VA_ARGS__);                                       \
  } else if constexpr (std::is_same_v<T, double>) {              \
    return D(__VA_ARGS__);                                       \
  } else if constexpr (std::is_same_v<T, std::complex<float>>) { \
    return C(__VA_ARGS__);                                       \
  } else {                                                       \
    return Z(__VA_ARGS__);                                       \
  }

template <class T>
cusolverStatus_t batched_buffer(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                                int* lwork, gesvdjInfo_t params, int batch) {
  STROP_DISPATCH(T, cusolverDnSgesvdjBatched_bufferSize, cusolverDnDgesvdjBatched_bufferSize,
                 cusolverDnCgesvdjBatched_bufferSize, cusolverDnZgesvdjBatched_bufferSize, h,
                 CUSOLVER_EIG_MODE_VECTOR, m, n, cu(a), m, s, cu(u), m, cu(v), n, lwork, params,
                 batch)
}
template <class T>
cusolverStatus_t batched(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                         T* work, int lwork, int* info, gesvdjInfo_t params, int batch) {
  STROP_DISPATCH(T, cusolverDnSgesvdjBatched, cusolverDnDgesvdjBatched, cusolverDnCgesvdjBatched,
                 cusolverDnZgesvdjBatched, h, CUSOLVER_EIG_MODE_VECTOR, m, n, cu(a), m, s, cu(u), m,
                 cu(v), n, cu(work), lwork, info, params, batch)
}
template <class T>
cusolverStatus_t single_buffer(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v,
                               int* lwork, gesvdjInfo_t params) {
  STROP_DISPATCH(T, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize,
                 cusolverDnCgesvdj_bufferSize, cusolverDnZgesvdj_bufferSize, h,
                 CUSOLVER_EIG_MODE_VECTOR, 1, m, n, cu(a), m, s, cu(u), m, cu(v), n, lwork, params)
}
template <class T>
cusolverStatus_t single(cusolverDnHandle_t h, int m, int n, T* a, RealOf<T>* s, T* u, T* v, T* work,
                        int lwork, int* info, gesvdjInfo_t params) {
  STROP_DISPATCH(T, cusolverDnSgesvdj, cusolverDnDgesvdj, cusolverDnCgesvdj, cusolverDnZgesvdj, h,
                 CUSOLVER_EIG_MODE_VECTOR, 1, m, n, cu(a), m, s, cu(u), m, cu(v), n, cu(work),
                 lwork, info, params)
}
template <class T>
cusolverStatus_t approx_buffer(cusolverDnHandle_t h, int rank, int m, int n, const T* a,
                               const RealOf<T>* s, const T* u, const T* v, int* lwork, int batch) {
  STROP_DISPATCH(
      T, cusolverDnSgesvdaStridedBatched_bufferSize, cusolverDnDgesvdaStridedBatched_bufferSize,
      cusolverDnCgesvdaStridedBatched_bufferSize, cusolverDnZgesvdaStridedBatched_bufferSize, h,
      CUSOLVER_EIG_MODE_VECTOR, rank, m, n, cu(a), m, static_cast<long long>(m) * n, s, rank, cu(u),
      m, static_cast<long long>(m) * rank, cu(v), n, static_cast<long long>(n) * rank, lwork, batch)
}
template <class T>
cusolverStatus_t approx(cusolverDnHandle_t h, int rank, int m, int n, const T* a, RealOf<T>* s,
                        T* u, T* v, T* work, int lwork, int* info, double* residual, int batch) {
  STROP_DISPATCH(T, cusolverDnSgesvdaStridedBatched, cusolverDnDgesvdaStridedBatched,
                 cusolverDnCgesvdaStridedBatched, cusolverDnZgesvdaStridedBatched, h,
                 CUSOLVER_EIG_MODE_VECTOR, rank, m, n, cu(a), m, static_cast<long long>(m) * n, s,
                 rank, cu(u), m, static_cast<long long>(m) * rank, cu(v), n,
                 static_cast<long long>(n) * rank, cu(work), lwork, info, residual, batch)
}

struct Solver {
  explicit Solver(Context& ctx) {
    check_cusolver(cusolverDnCreate(&handle), "cusolverDnCreate");
    check_cusolver(cusolverDnSetStream(handle, static_cast<cudaStream_t>(ctx.stream())),
                   "cusolverDnSetStream");
    check_cusolver(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
  }
  ~Solver() {
    cusolverDnDestroyGesvdjInfo(params);
    cusolverDnDestroy(handle);
  }
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

void require_converged(const std::vector<int>& info, const char* what) {
  for (std::size_t q = 0; q < info.size(); ++q)
    require<NumericalError>(info[q] == 0, what, ": block ", q, " failed (info ", info[q], ")");
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

}  // namespace

template <class T>
void block_svd_cuda(const std::vector<T>& blocks, BlockSvd<T>& out, Context& ctx) {
  require<DeviceError>(cuda_available(), "factorize: Device::cuda requested, no CUDA device");
  const Index count = out.count, m = out.rows, n = out.cols, k = std::min(m, n);
  const Index keep = std::min(out.rank, k);
  if (count == 0 || keep == 0) return;
  Solver solver(ctx);
  using Real = RealOf<T>;
  std::vector<double> norms(static_cast<std::size_t>(count), 0.0);
  for (Index q = 0; q < count; ++q)
    for (Index e = 0; e < m * n; ++e)
      norms[q] += double(std::norm(blocks[static_cast<std::size_t>(q * m * n + e)]));

  std::vector<T> hu, hv;
  std::vector<Real> hs;
  Index ucols = 0, vcols = 0, scount = 0;
  bool swapped = false;
  Index bm = m, bn = n;  // the shape actually factored
  if (count == 1 || (m <= 32 && n <= 32)) {
    // Jacobi: all singular triples (ucols = m, vcols = n; econ off for the batched form).
    const int im = int(m), in = int(n), batch = int(count);
    Buffer<T> a = upload(blocks, ctx);
    Buffer<Real> s(count * k, MemorySpace::Device, ctx);
    Buffer<T> u(count * m * m, MemorySpace::Device, ctx),
        v(count * n * n, MemorySpace::Device, ctx);
    Buffer<int> info(count, MemorySpace::Device, ctx);
    int lwork = 0;
    if (count == 1) {
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
                                    &lwork, solver.params, batch),
                     "gesvdjBatched_bufferSize");
      Buffer<T> work(lwork, MemorySpace::Device, ctx);
      check_cusolver(batched(solver.handle, im, in, a.data(), s.data(), u.data(), v.data(),
                             work.data(), lwork, info.data(), solver.params, batch),
                     "gesvdjBatched");
      ctx.synchronize();
    }
    require_converged(download(info, ctx), "gesvdj");
    hu = download(u, ctx);
    hv = download(v, ctx);
    hs = download(s, ctx);
    ucols = m;
    vcols = n;
    scount = k;
  } else {
    // gesvda needs tall blocks: factor the adjoint of wide ones.
    swapped = m < n;
    std::vector<T> tall;
    if (swapped) {
      bm = n;
      bn = m;
      tall.resize(blocks.size());
      for (Index q = 0; q < count; ++q)
        for (Index j = 0; j < n; ++j)
          for (Index i = 0; i < m; ++i)
            tall[static_cast<std::size_t>(q * m * n + j + i * n)] =
                strop::conj(blocks[static_cast<std::size_t>(q * m * n + i + j * m)]);
    }
    const int im = int(bm), in = int(bn), rank = int(keep), batch = int(count);
    Buffer<T> a = upload(swapped ? tall : blocks, ctx);
    Buffer<Real> s(count * keep, MemorySpace::Device, ctx);
    Buffer<T> u(count * bm * keep, MemorySpace::Device, ctx),
        v(count * bn * keep, MemorySpace::Device, ctx);
    Buffer<int> info(count, MemorySpace::Device, ctx);
    int lwork = 0;
    check_cusolver(approx_buffer(solver.handle, rank, im, in, a.data(), s.data(), u.data(),
                                 v.data(), &lwork, batch),
                   "gesvdaStridedBatched_bufferSize");
    Buffer<T> work(lwork, MemorySpace::Device, ctx);
    std::vector<double> residual(static_cast<std::size_t>(count));
    check_cusolver(approx(solver.handle, rank, im, in, a.data(), s.data(), u.data(), v.data(),
                          work.data(), lwork, info.data(), residual.data(), batch),
                   "gesvdaStridedBatched");
    ctx.synchronize();
    require_converged(download(info, ctx), "gesvdaStridedBatched");
    hu = download(u, ctx);
    hv = download(v, ctx);
    hs = download(s, ctx);
    ucols = keep;
    vcols = keep;
    scount = keep;
  }
  for (Index q = 0; q < count; ++q) {
    const T* uq = hu.data() + q * bm * ucols;
    const T* vq = hv.data() + q * bn * vcols;
    const Real* sq = hs.data() + q * scount;
    take(out, q, uq, sq, vq, keep, swapped);
    double kept = 0;
    for (Index t = 0; t < keep; ++t)
      kept += double(sq[t]) * double(sq[t]);
    out.dropped[static_cast<std::size_t>(q)] = std::max(0.0, norms[q] - kept);
  }
}

#define STROP_INSTANTIATE(T) \
  template void block_svd_cuda(const std::vector<T>&, BlockSvd<T>&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
