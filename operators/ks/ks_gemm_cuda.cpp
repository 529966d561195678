// GEMM-based GPU paths of a KS factor: StridedGemm (cuBLAS batched GEMM directly on the
// strided row groups of X and Y; batch-first operands with d > 1, which cuBLAS cannot
// address, through batch-contiguous copies) and Bmm, the papers' baseline (permute X into groups,
// batched GEMM, permute back). Both read the values in (a, d, b, c) order: one row-major
// b x c block per group g = i*d + j.
#include <climits>
#include <cstdint>
#include <optional>

#include "operators/ks/ks_device.hpp"
#include "operators/ks/ks_group_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_types.hpp"
#include "runtime/strided_gemm.hpp"
#include "strop/core/buffer.hpp"

namespace strop::detail {
namespace {

int as_int(Index v, const char* what) {
  require<DeviceError>(v >= 0 && v <= INT_MAX, "ks grouped gemm: ", what, " = ", v,
                       " exceeds cuBLAS's 32-bit sizes");
  return static_cast<int>(v);
}

bool batch_contiguous(const auto& v) {
  return v.col_stride == 1 || v.cols == 1;
}  // as in ks_chooser.cpp

// True when every address base + k * step (k >= 0) is 16-byte aligned.
bool aligned16(const void* base, Index step_bytes) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && step_bytes % 16 == 0;
}

// cuBLAS batched GEMMs over the groups of the factor on views where it is supported
// (see ks_strided_gemm_supported).
template <class T>
void grouped_gemm(Index groups, Index d, Index out, Index in, const T* w_adbc, Op op,
                  ConstView<T> X, MatrixView<T> Y, ComputeScalar<T> alpha, ComputeScalar<T> beta,
                  Context& ctx) {
  const Index a = groups / d;
  const cudaDataType_t type = cuda_data_type<T>();
  const int batch = as_int(X.cols, "batch");
  const int m_out = as_int(out, "rows per group");
  const int k_in = as_int(in, "columns per group");
  // W_g is stored row-major out x in... in the NoTrans orientation (b x c). As a column-
  // major matrix the buffer is W_g^T (c x b, leading dimension c).
  const int ld_w = as_int(op == Op::NoTrans ? in : out, "c");
  const bool rows_contiguous = batch_contiguous(X) && batch_contiguous(Y);
  // Column-major reading of batch-contiguous groups: Y_g^T (B x out) = X_g^T (B x in) *
  // op(W_g)^T, where op(W_g)^T is the buffer itself (N), its transpose (T) or its conjugate
  // transpose (C). A one-row group leaves the row stride meaningless (a 1 x B view may report
  // 1); cuBLAS still wants ld >= B, which any valid multi-row view satisfies anyway.
  // Otherwise d == 1 and signals contiguous: Y_i (out x B) = op(W_i) X_i; op(W_i) is the
  // buffer transposed (T) for NoTrans and the buffer itself (N) for Trans (real Adjoint too).
  const cublasOperation_t w_op =
      rows_contiguous
          ? (op == Op::NoTrans ? CUBLAS_OP_N : (op == Op::Trans ? CUBLAS_OP_T : CUBLAS_OP_C))
          : (op == Op::NoTrans ? CUBLAS_OP_T : CUBLAS_OP_N);
  const int ld_x = rows_contiguous ? as_int(std::max<Index>(d * X.row_stride, X.cols), "ld x")
                                   : as_int(X.col_stride, "ld x");
  const int ld_y = rows_contiguous ? as_int(std::max<Index>(d * Y.row_stride, Y.cols), "ld y")
                                   : as_int(Y.col_stride, "ld y");
  const auto fail = [&](cublasStatus_t status) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    throw DeviceError(concat("ks grouped gemm (cuBLAS batched GEMM): cuBLAS status ", int(status),
                             " for op ", to_string(op), ", groups ", groups, ", d ", d, ", out ",
                             out, ", in ", in, ", batch ", X.cols, ", ld x/w/y ", ld_x, "/", ld_w,
                             "/", ld_y, ", X strides (", X.row_stride, ", ", X.col_stride,
                             "), Y strides (", Y.row_stride, ", ", Y.col_stride, ")"));
  };
  // `count` groups whose X rows, Y rows and weights start `x_step`, `y_step` and `w_step`
  // elements apart, as one strided batched GEMM.
  const auto run_strided = [&](Index first_row_x, Index first_row_y, Index first_group,
                               long long x_step, long long y_step, long long w_step, Index count) {
    const T* x = X.data + first_row_x * X.row_stride;
    T* y = Y.data + first_row_y * Y.row_stride;
    const T* w = w_adbc + first_group * out * in;
    const int n = as_int(count, "groups");
    fail(rows_contiguous ? strided_batched_gemm(ctx, CUBLAS_OP_N, w_op, batch, m_out, k_in, &alpha,
                                                x, type, ld_x, x_step, w, ld_w, w_step, &beta, y,
                                                ld_y, y_step, n, cublas_compute_type<T>())
                         : strided_batched_gemm(ctx, w_op, CUBLAS_OP_N, m_out, batch, k_in, &alpha,
                                                w, type, ld_w, w_step, x, ld_x, x_step, &beta, y,
                                                ld_y, y_step, n, cublas_compute_type<T>()));
  };
  // Group g = i d + j starts at row (i in d + j) of X and (i out d + j) of Y in both layouts.
  // With a == 1 or d == 1 those starts are one arithmetic progression: one strided batched
  // GEMM, no pointer array (cuBLAS's pointer-array path is several times slower for a few
  // large groups).
  if (a == 1 || d == 1) {
    return run_strided(0, 0, 0, (d == 1 ? in : 1) * X.row_stride, (d == 1 ? out : 1) * Y.row_stride,
                       out * in, groups);
  }
  // Otherwise the pointers are built on the device. cuBLAS cannot see them there and picks
  // its kernel's vector width from the leading dimensions alone, so a pointer less aligned
  // than that faults (cudaErrorMisalignedAddress: 16-bit signals at an odd offset). The
  // pointer array is taken only when every pointer is 16-byte aligned; else one strided
  // batched GEMM per i (or per j, whichever is fewer), whose pointers cuBLAS checks itself.
  const Index bytes = Index(sizeof(T));
  if (aligned16(X.data, X.row_stride * bytes) && aligned16(Y.data, Y.row_stride * bytes) &&
      aligned16(w_adbc, out * in * bytes)) {
    Buffer<const void*> x_ptr(groups, MemorySpace::Device, ctx);
    Buffer<void*> y_ptr(groups, MemorySpace::Device, ctx);
    Buffer<const void*> w_ptr(groups, MemorySpace::Device, ctx);
    ks_group_pointers({reinterpret_cast<const char*>(X.data), reinterpret_cast<char*>(Y.data),
                       reinterpret_cast<const char*>(w_adbc), in * d * X.row_stride, X.row_stride,
                       out * d * Y.row_stride, Y.row_stride, out * in, groups, d, bytes,
                       x_ptr.data(), y_ptr.data(), w_ptr.data()},
                      ctx);
    auto handle = static_cast<cublasHandle_t>(ctx.cublas());
    const int count = as_int(groups, "groups");
    fail(rows_contiguous ? cublasGemmBatchedEx(handle, CUBLAS_OP_N, w_op, batch, m_out, k_in,
                                               &alpha, x_ptr.data(), type, ld_x, w_ptr.data(), type,
                                               ld_w, &beta, y_ptr.data(), type, ld_y, count,
                                               cublas_compute_type<T>(), CUBLAS_GEMM_DEFAULT)
                         : cublasGemmBatchedEx(handle, w_op, CUBLAS_OP_N, m_out, batch, k_in,
                                               &alpha, w_ptr.data(), type, ld_w, x_ptr.data(), type,
                                               ld_x, &beta, y_ptr.data(), type, ld_y, count,
                                               cublas_compute_type<T>(), CUBLAS_GEMM_DEFAULT));
    return;
  }
  if (a <= d) {
    for (Index i = 0; i < a; ++i)
      run_strided(i * in * d, i * out * d, i * d, X.row_stride, Y.row_stride, out * in, d);
  } else {
    for (Index j = 0; j < d; ++j)
      run_strided(j, j, j, in * d * X.row_stride, out * d * Y.row_stride, d * out * in, a);
  }
}

}  // namespace

template <class T>
void ks_grouped_gemm_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X,
                           MatrixView<T> Y, ComputeScalar<T> alpha, ComputeScalar<T> beta,
                           bool permute, Context& ctx) {
  using A = ComputeScalar<T>;
  const bool transposed = op != Op::NoTrans;
  const Index out = transposed ? p.c : p.b;
  const Index in = transposed ? p.b : p.c;
  const Index groups = p.a * p.d;
  if (!permute) {
    if (strop::ks_strided_gemm_supported(p, op, X, ConstView<T>(Y)))
      return grouped_gemm(groups, p.d, out, in, w_adbc, op, X, Y, alpha, beta, ctx);
    // cuBLAS cannot address the groups in place (batch-first signals with d > 1, or a
    // conjugate-only product): the batch-first operands go through batch-contiguous copies.
    std::optional<TempMatrix<T>> x_copy, y_copy;
    const auto to_batch_contiguous = [&](std::optional<TempMatrix<T>>& copy, ConstView<T> v,
                                         bool fill) {
      copy.emplace(v.rows, v.cols, Layout::RowMajor, MemorySpace::Device, ctx);
      if (fill)
        ks_relayout(v.data, v.row_stride, v.col_stride, copy->view.data, copy->view.row_stride,
                    copy->view.col_stride, v.rows, v.cols, int(sizeof(T)), ctx);
      return copy->view;
    };
    const ConstView<T> x_rows = batch_contiguous(X) ? X : to_batch_contiguous(x_copy, X, true);
    // beta = 0: Y is not read (NaN there stays out).
    const MatrixView<T> y_rows =
        batch_contiguous(Y) ? Y : to_batch_contiguous(y_copy, ConstView<T>(Y), beta != A(0));
    grouped_gemm(groups, p.d, out, in, w_adbc, op, x_rows, y_rows, alpha, beta, ctx);
    if (y_copy)
      ks_relayout(y_rows.data, y_rows.row_stride, y_rows.col_stride, Y.data, Y.row_stride,
                  Y.col_stride, Y.rows, Y.cols, int(sizeof(T)), ctx);
    return;
  }
  // Bmm: X -> grouped order (one contiguous in x B block per group), GEMM, back.
  TempMatrix<T> xg(X.rows, X.cols, Layout::RowMajor, MemorySpace::Device, ctx);
  TempMatrix<T> yg(Y.rows, Y.cols, Layout::RowMajor, MemorySpace::Device, ctx);
  ks_permute_rows(A(1), X, A(0), xg.view, in, p.d, true, ctx);
  grouped_gemm(groups, Index(1), out, in, w_adbc, op, ConstView<T>(xg.view), yg.view, A(1), A(0),
               ctx);
  ks_permute_rows(alpha, ConstView<T>(yg.view), beta, Y, out, p.d, false, ctx);
}

#define STROP_INSTANTIATE(T)                                                                      \
  template void ks_grouped_gemm_apply(const KSPattern& p, const T* w_adbc, Op op, ConstView<T> X, \
                                      MatrixView<T> Y, ComputeScalar<T> alpha,                    \
                                      ComputeScalar<T> beta, bool permute, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
