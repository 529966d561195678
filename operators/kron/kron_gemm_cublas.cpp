// One sliced multiply as one cuBLAS strided-batched GEMM, the permuted store written by the
// output strides (no transpose pass, unlike the shuffle algorithm):
//
//   batch-first (ColMajor): signal b's input is a P x S column-major matrix A_b (S = K/P
//     slices) and its output Z'[q*S + s] a S x Q column-major matrix C_b, so
//     C_b = A_b^T G^T, a GEMM of m = S, n = Q, k = P per signal, batched over the signals.
//   batch-last (RowMajor): the input is (S, P, B) and the output (Q, S, B); slice s is
//     C_s (B x Q, leading dimension S*B, at offset s*B) = A_s (B x P) G^T, batched over s.
//
// One read and one write of the intermediate per factor at cuBLAS's GEMM rate, with tensor
// cores for double (DMMA) and for half/bfloat16 (fp32 accumulation); float stays on FP32
// (no TF32), the arithmetic of the CPU path.
#include <algorithm>

#include "operators/kron/kron_kernels.hpp"
#include "runtime/cuda_types.hpp"
#include "runtime/strided_gemm.hpp"
#include "strop/core/reduced_precision.hpp"

namespace strop::detail {

template <class T>
KronGemmFactor<T> kron_gemm_factor(std::span<const KronFactorRef<T>> group, T* room, Context& ctx) {
  if (group.size() > 1) {
    kron_merge_factors(group, room, ctx);
    Index Q = 1;
    for (const auto& g : group)
      Q *= g.Q;
    return {room, Q, true, false};
  }
  const KronFactorRef<T>& g = group.front();
  // G[q][p] = data[q*stride_q + p*stride_p]. Column-major G (stride_q == 1): G^T is the
  // transpose (conjugate transpose when conjugated). Column-major G^T (stride_p == 1): as is.
  if (g.data != nullptr && g.stride_q == 1 && g.stride_p >= std::max<Index>(g.Q, 1))
    return {g.data, g.stride_p, true, g.conjugate};
  if (g.data != nullptr && g.stride_p == 1 && !g.conjugate && g.stride_q >= std::max<Index>(g.P, 1))
    return {g.data, g.stride_q, false, false};
  kron_pack_factor(g, room, ctx);  // G column-major, Q x P, conjugation applied
  return {room, std::max<Index>(g.Q, 1), true, false};
}

// One call, sizes as they are: strided_batched_gemm takes 64-bit ones (batch-last, ldc = S*B
// exceeds an int on large batches; cuBLAS's 64-bit interface then runs it).
template <class T, class Compute>
void kron_gemm_step(const KronGemmFactor<T>& g, Index P, Index Q, const T* in, T* out, Index K,
                    Index B, Layout layout, Compute alpha, Compute beta, Context& ctx) {
  const cudaDataType_t type = cuda_data_type<T>();
  const cublasOperation_t g_op =
      !g.transpose ? CUBLAS_OP_N : (g.conjugate ? CUBLAS_OP_C : CUBLAS_OP_T);
  const Index S = K / P;
  const cublasComputeType_t compute = cublas_compute_type<T>();
  cublasStatus_t status;
  // One factor over whole signals (S = 1) on batch-first data: C_b is one row, and B GEMMs of
  // one row each are one GEMM, Out (Q x B) = G In (In P x B with leading dimension K), which
  // cuBLAS runs at its rate instead of as B tiny products (DistributedKron's local steps
  // apply a factor to every chunk of a part as to a signal: B in the tens of millions).
  // G^T conjugated has no such form (cuBLAS conjugates only with a transposition).
  if (S == 1 && B > 1 && layout == Layout::ColMajor && g_op != CUBLAS_OP_C) {
    status = strided_batched_gemm(ctx, g_op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                                  Q, B, P, &alpha, g.data, type, g.ld, 0, in, K, 0, &beta, out, Q,
                                  0, 1, compute);
  } else if (layout == Layout::ColMajor || B == 1) {
    status = strided_batched_gemm(ctx, CUBLAS_OP_T, g_op, S, Q, P, &alpha, in, type, P, K, g.data,
                                  g.ld, 0, &beta, out, S, S * Q, B, compute);
  } else {
    status = strided_batched_gemm(ctx, CUBLAS_OP_N, g_op, B, Q, P, &alpha, in, type, B, P * B,
                                  g.data, g.ld, 0, &beta, out, S * B, B, S, compute);
  }
  require<DeviceError>(status == CUBLAS_STATUS_SUCCESS,
                       "kron_matmul: cuBLAS strided-batched GEMM failed with status ", int(status),
                       " (P ", P, ", Q ", Q, ", K ", K, ", batch ", B, ", ", to_string(layout),
                       ")");
}

#define STROP_INSTANTIATE(T)                                                                       \
  template KronGemmFactor<T> kron_gemm_factor(std::span<const KronFactorRef<T>>, T*, Context&);    \
  template void kron_gemm_step(const KronGemmFactor<T>&, Index, Index, const T*, T*, Index, Index, \
                               Layout, T, T, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
#undef STROP_INSTANTIATE
template void kron_gemm_step(const KronGemmFactor<half>&, Index, Index, const half*, half*, Index,
                             Index, Layout, float, float, Context&);
template void kron_gemm_step(const KronGemmFactor<bfloat16>&, Index, Index, const bfloat16*,
                             bfloat16*, Index, Index, Layout, float, float, Context&);

}  // namespace strop::detail
