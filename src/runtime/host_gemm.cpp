#include "runtime/host_gemm.hpp"

namespace strop::detail {

template <class T>
void host_gemm(Op op, Eigen::Map<const HostMatrix<T>> A, ConstView<T> X, MatrixView<T> Y, T alpha,
               T beta) {
  with_eigen_maps(X, Y, [&](const auto& x, auto y) { gemm(op, A, x, y, alpha, beta); });
}

#define STROP_INSTANTIATE(T)                                                        \
  template void host_gemm(Op op, Eigen::Map<const HostMatrix<T>> A, ConstView<T> X, \
                          MatrixView<T> Y, T alpha, T beta);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
