#pragma once
// Internal (CUDA builds): the one call behind every strided-batched cuBLAS GEMM of the
// operators (BLR plans, STL colour GEMMs, Kron GEMM passes, KS groups, BLAST fitting).
//
// Tuning off (the default): cublasGemmStridedBatchedEx with CUBLAS_GEMM_DEFAULT, as cuBLAS
// picks. Tuning on (strop/core/tuning.hpp): for a real type, the candidates are that call and
// the algorithms cuBLASLt's heuristic proposes for the same product; each is replayed from a
// CUDA graph on scratch output (the caller's C is never written while measuring), and the
// fastest is cached under a key naming the device, the cuBLASLt version, the types, the
// operations, the sizes, leading dimensions, strides, batch, whether beta is zero and the
// pointers' alignment. Under graph capture nothing is measured: a cached choice is used,
// cuBLAS's default otherwise. Products with a size beyond an int (m, n, k, a leading
// dimension, the batch) run cublasGemmStridedBatchedEx_64 with CUBLAS_GEMM_DEFAULT, untuned.
#if STROP_HAVE_CUDA
#include <cublas_v2.h>

#include "strop/core/context.hpp"

namespace strop::detail {

// cublasGemmStridedBatchedEx's arguments with ctx in place of the handle (the product runs on
// ctx's stream) and without the algorithm: C_i = alpha op(A_i) op(B_i) + beta C_i for
// i < batch, column-major, X_i = X + i stride_x. The three matrices share `type`; alpha and
// beta point to host scalars of the compute type's scale type. Returns the status of the
// cuBLAS or cuBLASLt call that ran it (the caller words the error); a tuned cuBLASLt algorithm
// that refuses the call falls back to cuBLAS's default.
//
// Sizes are 64-bit: where m, n, k, a leading dimension or the batch exceeds an int, the
// product runs as cublasGemmStridedBatchedEx_64 with cuBLAS's default algorithm (never tuned);
// otherwise as above.
cublasStatus_t strided_batched_gemm(Context& ctx, cublasOperation_t trans_a,
                                    cublasOperation_t trans_b, long long m, long long n,
                                    long long k, const void* alpha, const void* a,
                                    cudaDataType_t type, long long lda, long long stride_a,
                                    const void* b, long long ldb, long long stride_b,
                                    const void* beta, void* c, long long ldc, long long stride_c,
                                    long long batch, cublasComputeType_t compute);

}  // namespace strop::detail
#endif
