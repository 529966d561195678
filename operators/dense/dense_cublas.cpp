// Dense on the GPU: one cuBLAS GEMM in either layout.
//
// A column-major Y is C = op(A) X. A row-major Y is, read column-major, Y^T, so we compute
// Y^T = X^T op(A)^T. X enters as its buffer with N or T depending on its own layout.
// op(A)^T for op = A^H is conj(A), which cuBLAS cannot express: the caller passes a cached
// conjugated copy of A for that case.
#include <climits>

#include "runtime/cublas_calls.hpp"
#include "runtime/cuda_check.hpp"
#include "strop/operators/dense.hpp"

namespace strop::detail {
namespace {

int to_int(Index v, const char* what) {
  require<DeviceError>(v >= 0 && v <= INT_MAX, "dense (cuBLAS): ", what, " = ", v,
                       " exceeds cuBLAS's 32-bit sizes");
  return static_cast<int>(v);
}

// Leading dimension of a view with one unit stride (cuBLAS cannot read other strides).
template <class T>
int leading_dimension(const MatrixView<T>& v, bool col_major, const char* name) {
  require<DeviceError>(v.row_stride == 1 || v.col_stride == 1, "dense (cuBLAS): ", name,
                       " has strides (", v.row_stride, ", ", v.col_stride,
                       "); a GPU view needs one unit stride");
  // Views reach here with distinct elements (check_signal_strides refuses the others at
  // apply), so ld >= the inner extent wherever it is used; a single outer vector may report
  // any stride, and cuBLAS still wants ld >= the inner extent.
  const Index ld = col_major ? v.col_stride : v.row_stride;
  return to_int(std::max<Index>(ld, std::max<Index>(col_major ? v.rows : v.cols, 1)), name);
}

}  // namespace

template <class T>
void dense_apply_device(const T* a, const T* a_conj, Index rows, Index cols, Op op, ConstView<T> X,
                        MatrixView<T> Y, ComputeScalar<T> alpha, ComputeScalar<T> beta,
                        Context& ctx) {
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  const bool x_col = X.row_stride == 1;
  const bool y_col = Y.row_stride == 1;
  const int ldx = leading_dimension(X, x_col, "X");
  const int ldy = leading_dimension(Y, y_col, "Y");
  const int lda = to_int(std::max<Index>(rows, 1), "lda");
  const int m_out = to_int(Y.rows, "rows");
  const int batch = to_int(Y.cols, "batch");
  const int k = to_int(X.rows, "inner");
  if (y_col) {
    check_cublas(gemm(handle, to_cublas(op), x_col ? CUBLAS_OP_N : CUBLAS_OP_T, m_out, batch, k,
                      &alpha, a, lda, X.data, ldx, &beta, Y.data, ldy),
                 "dense gemm (column-major Y)");
  } else {
    // Y^T = X^T op(A)^T.
    const T* a_used = op == Op::Adjoint && is_complex_v<T> ? a_conj : a;
    const cublasOperation_t a_op = op == Op::NoTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
    check_cublas(gemm(handle, x_col ? CUBLAS_OP_T : CUBLAS_OP_N, a_op, batch, m_out, k, &alpha,
                      X.data, ldx, a_used, lda, &beta, Y.data, ldy),
                 "dense gemm (row-major Y)");
  }
  (void)cols;
}

#define STROP_INSTANTIATE(T)                                                                   \
  template void dense_apply_device(const T* a, const T* a_conj, Index rows, Index cols, Op op, \
                                   ConstView<T> X, MatrixView<T> Y, ComputeScalar<T> alpha,    \
                                   ComputeScalar<T> beta, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
