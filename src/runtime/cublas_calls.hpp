#pragma once
// cuBLAS calls shared by the operators and factorizations (internal header, CUDA builds):
// strop's Op as a cuBLAS operation and GEMM for the four scalar types.
#if STROP_HAVE_CUDA
#include <cublas_v2.h>

#include "runtime/cuda_types.hpp"
#include "strop/core/op.hpp"

namespace strop::detail {

inline cublasOperation_t to_cublas(Op op) {
  switch (op) {
    case Op::NoTrans:
      return CUBLAS_OP_N;
    case Op::Trans:
      return CUBLAS_OP_T;
    case Op::Adjoint:
      return CUBLAS_OP_C;
  }
  return CUBLAS_OP_N;
}

// cublas{S,D,C,Z}gemm, column-major: C = alpha op(A) op(B) + beta C.
template <class T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const T* alpha, const T* a, int lda, const T* b, int ldb, const T* beta,
                    T* c, int ldc) {
  STROP_CUDA_DISPATCH(T, cublasSgemm, cublasDgemm, cublasCgemm, cublasZgemm, h, ta, tb, m, n, k,
                      as_cuda(alpha), as_cuda(a), lda, as_cuda(b), ldb, as_cuda(beta), as_cuda(c),
                      ldc)
}

// 16-bit storage: cublasGemmEx on tensor cores, fp32 accumulation and scalars.
template <ReducedPrecision T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const float* alpha, const T* a, int lda, const T* b, int ldb,
                    const float* beta, T* c, int ldc) {
  const cudaDataType_t type = cuda_data_type<T>();
  return cublasGemmEx(h, ta, tb, m, n, k, alpha, a, type, lda, b, type, ldb, beta, c, type, ldc,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace strop::detail
#endif
