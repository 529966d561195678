// The shuffle algorithm (GPyTorch, PyKronecker), the baseline of FastKron's evaluation and
// our fallback: per factor, from the last to the first, a reshape, a cuBLAS GEMM and a
// transpose kernel. Batch-first (ColMajor) data: Z viewed as a P x (S*B) column-major
// matrix, T = G Z (Q x S*B), then each signal's Q x S block is transposed into Z'. Batch-last
// (RowMajor): Z is (S, P, B); transpose to (P, S, B), then one GEMM gives (Q, S, B) = Z'
// in place. Each step reads and writes the intermediate twice, which is what the fused
// kernel saves.
#include <climits>

#include "operators/kron/kron_kernels.hpp"
#include "operators/kron/kron_plan.hpp"
#include "runtime/cublas_calls.hpp"
#include "runtime/cuda_check.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/elementwise.hpp"

namespace strop::detail {
namespace {

int to_int(Index v, const char* what) {
  require<DeviceError>(v >= 0 && v <= INT_MAX, "kron shuffle (cuBLAS): ", what, " = ", v,
                       " exceeds cuBLAS's 32-bit sizes");
  return int(v);
}

}  // namespace

template <class T>
void kron_shuffle(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                  T alpha, T beta, void* workspace, std::size_t workspace_bytes, Context& ctx) {
  const Layout layout = layout_of(Y);
  const Index B = X.cols;
  const int n = int(factors.size());
  std::vector<KronShape> shapes;
  for (const auto& g : factors)
    shapes.push_back({g.P, g.Q});
  const KronPlan plan = plan_kron(shapes, B, layout, KronAlgorithm::Shuffle, sizeof(T));
  KronCarver carve{static_cast<char*>(workspace), static_cast<char*>(workspace) + workspace_bytes};
  T* buf[2] = {carve.take<T>(plan.buffer_rows * B), carve.take<T>(plan.buffer_rows * B)};
  T* tmp = carve.take<T>(plan.buffer_rows * B);
  std::vector<T*> packed_g(n);
  for (int f = 0; f < n; ++f) {
    packed_g[f] = carve.take<T>(factors[f].P * factors[f].Q);
    kron_pack_factor(factors[f], packed_g[f], ctx);
  }

  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  Index K = X.rows;
  const T* cur = X.data;
  int next = 0;
  if (!kron_packed(X, layout)) {  // bring X into the packed layout of the computation
    axpby(T(1), X, T(0), make_view(buf[0], K, B, layout, MemorySpace::Device), false, ctx);
    cur = buf[0];
    next = 1;
  }
  const bool y_packed = kron_packed(Y, layout);
  const T one(1), zero(0);
  for (int f = n - 1; f >= 0; --f) {
    const Index P = factors[f].P, Q = factors[f].Q, S = K / P;
    const bool last = f == 0;
    const bool into_y = last && y_packed;
    T* out = into_y ? Y.data : buf[next];
    const T& a = into_y ? alpha : one;
    const T& b = into_y ? beta : zero;
    if (layout == Layout::ColMajor) {
      check_cublas(gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, to_int(Q, "Q"), to_int(S * B, "S*B"),
                        to_int(P, "P"), &one, packed_g[f], to_int(Q, "Q"), cur, to_int(P, "P"),
                        &zero, tmp, to_int(Q, "Q")),
                   "kron shuffle gemm");
      kron_permute(tmp, out, B, S, Q, Index(1), a, b, into_y, ctx);
    } else {
      kron_permute(cur, tmp, Index(1), S, P, B, one, zero, false, ctx);
      const int sb = to_int(S * B, "S*B");
      check_cublas(gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, sb, to_int(Q, "Q"), to_int(P, "P"), &a,
                        tmp, sb, packed_g[f], to_int(Q, "Q"), &b, out, sb),
                   "kron shuffle gemm");
    }
    K = S * Q;
    if (!into_y) {
      cur = out;
      next = 1 - next;
    }
  }
  if (!y_packed)
    axpby(alpha, ConstView<T>(make_view(const_cast<T*>(cur), K, B, layout, MemorySpace::Device)),
          beta, Y, false, ctx);
}

#define STROP_INSTANTIATE(T)                                                                       \
  template void kron_shuffle(std::span<const KronFactorRef<T>>, ConstView<T>, MatrixView<T>, T, T, \
                             void*, std::size_t, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
