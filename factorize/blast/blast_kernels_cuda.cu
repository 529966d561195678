// BlastKernels on the GPU (host code; a .cu so that only the CUDA build compiles it):
// strided-batched cuBLAS GEMMs for the per-block products, cuSOLVER batched Cholesky plus
// two cuBLAS batched triangular solves for the shifted r x r systems, the element-wise
// pieces in blast_block_kernels.cu. All work is queued on the context's stream; norm() and
// the Cholesky status check are the only waits.
#include <algorithm>
#include <vector>

#include "factorize/blast/blast_block_kernels.hpp"
#include "runtime/cublas_calls.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_types.hpp"
#include "runtime/strided_gemm.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

template <class T>
cusolverStatus_t cholesky_batched(cusolverDnHandle_t h, int n, T** a, int lda, int* info,
                                  int batch) {
  STROP_CUDA_DISPATCH(T, cusolverDnSpotrfBatched, cusolverDnDpotrfBatched, cusolverDnCpotrfBatched,
                      cusolverDnZpotrfBatched, h, CUBLAS_FILL_MODE_LOWER, n,
                      reinterpret_cast<typename CudaScalarOf<T>::type**>(a), lda, info, batch)
}

template <class T>
cublasStatus_t triangular_solve_batched(cublasHandle_t h, cublasSideMode_t side,
                                        cublasOperation_t op, int m, int n, T* const* a, int lda,
                                        T* const* b, int ldb, int batch) {
  using C = typename CudaScalarOf<T>::type;
  const T one(1);
  STROP_CUDA_DISPATCH(T, cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched,
                      cublasZtrsmBatched, h, side, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT,
                      m, n, as_cuda(&one), reinterpret_cast<const C* const*>(a), lda,
                      reinterpret_cast<C* const*>(b), ldb, batch)
}

template <class T>
class CudaBlastKernels final : public BlastKernels<T> {
 public:
  CudaBlastKernels(const BlastShape& shape, Context& ctx)
      : s_(shape),
        ctx_(ctx),
        blas_(static_cast<cublasHandle_t>(ctx.cublas())),
        solver_(static_cast<cusolverDnHandle_t>(ctx.cusolver())) {}

  MemorySpace space() const override { return MemorySpace::Device; }

  void gemm(Op op_a, Op op_b, Index m, Index n, Index k, T alpha, Batched<const T*> a,
            Batched<const T*> b, T beta, Batched<T*> c, Index batch) override {
    const cudaDataType_t type = cuda_data_type<T>();
    check_cublas(
        strided_batched_gemm(ctx_, to_cublas(op_a), to_cublas(op_b), cuda_int(m, "blast gemm m"),
                             cuda_int(n, "blast gemm n"), cuda_int(k, "blast gemm k"), &alpha,
                             a.data, type, cuda_int(a.ld, "blast gemm lda"), a.stride, b.data,
                             cuda_int(b.ld, "blast gemm ldb"), b.stride, &beta, c.data,
                             cuda_int(c.ld, "blast gemm ldc"), c.stride,
                             cuda_int(batch, "blast gemm batch"), cublas_compute_type<T>()),
        "factorize_blast: strided-batched GEMM");
  }

  void scale_left_factor(const T* B, const T* d, T* b_bar) override {
    launch_scale_left_factor(s_, B, d, b_bar, ctx_);
  }
  void scale_right_factor(const T* C, const T* d, T* c_bar) override {
    launch_scale_right_factor(s_, C, d, c_bar, ctx_);
  }
  void weighted_gram_sum(const T* grams, const T* d, bool over_col_blocks, T* out) override {
    launch_weighted_gram_sum(s_, grams, d, over_col_blocks, out, ctx_);
  }
  void hadamard_gram(const T* F, const T* G, T* k) override {
    launch_hadamard_gram(s_, F, G, k, ctx_);
  }
  void diagonal_dots(const T* z, const T* C, T* g) override {
    launch_diagonal_dots(s_, z, C, g, ctx_);
  }

  void solve_shifted_hpd(SolveSide side, Index n, Index nrhs, T* K, Index batch, double shift,
                         Batched<T*> x) override {
    if (batch == 0 || n == 0) return;
    launch_add_to_diagonal(K, n, batch, shift, ctx_);
    Buffer<T*> k_ptr(batch, MemorySpace::Device, ctx_), x_ptr(batch, MemorySpace::Device, ctx_);
    launch_batch_pointers(K, n * n, batch, k_ptr.data(), ctx_);
    launch_batch_pointers(x.data, x.stride, batch, x_ptr.data(), ctx_);
    const int order = cuda_int(n, "blast solve order"),
              count = cuda_int(batch, "blast solve batch");
    Buffer<int> info(batch, MemorySpace::Device, ctx_);
    check_cusolver(cholesky_batched<T>(solver_, order, k_ptr.data(), order, info.data(), count),
                   "factorize_blast: cusolverDnXpotrfBatched");
    require_positive_definite(info, n, shift);
    // K = L L^H. Left: L (L^H X) = Y. Right: (X L) L^H = Y, so first against L^H, then L.
    const int rhs = cuda_int(nrhs, "blast solve rhs"), ldx = cuda_int(x.ld, "blast solve ldx");
    const bool left = side == SolveSide::left;
    const cublasSideMode_t mode = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    const int m = left ? order : rhs, cols = left ? rhs : order;
    for (cublasOperation_t op :
         {left ? CUBLAS_OP_N : CUBLAS_OP_C, left ? CUBLAS_OP_C : CUBLAS_OP_N})
      check_cublas(triangular_solve_batched<T>(blas_, mode, op, m, cols, k_ptr.data(), order,
                                               x_ptr.data(), ldx, count),
                   "factorize_blast: cublasXtrsmBatched");
  }

  void axpy(Index count, T alpha, const T* x, T* y) override {
    const cudaDataType_t type = cuda_data_type<T>();
    check_cublas(cublasAxpyEx(blas_, cuda_int(count, "blast axpy size"), &alpha, type, x, type, 1,
                              y, type, 1, type),
                 "factorize_blast: cublasAxpyEx");
  }

  double norm(Index count, const T* x) override {
    RealOf<T> result = 0;
    const cudaDataType_t real_type = cuda_data_type<RealOf<T>>();
    // The handle's pointer mode is host: the result arrives synchronously.
    check_cublas(cublasNrm2Ex(blas_, cuda_int(count, "blast norm size"), x, cuda_data_type<T>(), 1,
                              &result, real_type, real_type),
                 "factorize_blast: cublasNrm2Ex");
    return double(result);
  }

 private:
  void require_positive_definite(const Buffer<int>& info, Index n, double shift) {
    std::vector<int> host(static_cast<std::size_t>(info.size()));
    copy_bytes(host.data(), MemorySpace::Host, info.data(), MemorySpace::Device,
               sizeof(int) * host.size(), ctx_);
    for (std::size_t t = 0; t < host.size(); ++t)
      require<NumericalError>(host[t] == 0, "factorize_blast: preconditioner ", t, " (", n, "x", n,
                              ", shift ", shift, ") is not positive definite (potrf info ", host[t],
                              ")");
  }

  BlastShape s_;
  Context& ctx_;
  cublasHandle_t blas_;
  cusolverDnHandle_t solver_;
};

}  // namespace

template <class T>
std::unique_ptr<BlastKernels<T>> make_blast_kernels_cuda(const BlastShape& shape, Context& ctx) {
  return std::make_unique<CudaBlastKernels<T>>(shape, ctx);
}

#define STROP_INSTANTIATE(T) \
  template std::unique_ptr<BlastKernels<T>> make_blast_kernels_cuda(const BlastShape&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
