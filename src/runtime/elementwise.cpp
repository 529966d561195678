#include "strop/expr/elementwise.hpp"
#include "runtime/host_gemm.hpp"
#include "strop/core/eigen_map.hpp"

namespace strop::detail {

#if STROP_HAVE_CUDA
// Device versions live in elementwise.cu.
template <class T>
void device_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, Context& ctx);
#endif

template <class T>
void axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, Context& ctx) {
  if (Y.space == MemorySpace::Device) {
#if STROP_HAVE_CUDA
    return device_axpby(alpha, X, beta, Y, conjugate_x, ctx);
#else
    (void)ctx;
    throw DeviceError("axpby on device memory: strop was built without CUDA");
#endif
  }
  // Unit-stride maps where X and Y share a layout: Eigen vectorises those (10-30 % faster on
  // 256 x 65536 float sums on 2 cores; the strided maps' dynamic inner stride does not vectorise).
  with_eigen_maps(X, Y, [&](const auto& x, auto y) {
    if (beta == T(0)) {
      if (conjugate_x) {
        y = alpha * x.conjugate();
      } else {
        y = alpha * x;
      }
    } else if (conjugate_x) {
      y = alpha * x.conjugate() + beta * y;
    } else {
      y = alpha * x + beta * y;
    }
  });
}

template <class T>
void scale(T beta, MatrixView<T> Y, Context& ctx) {
  // axpby with alpha = 0 reads X only through a zero product; pass Y itself as X.
  if (Y.space == MemorySpace::Host) {
    auto y = eigen_map(Y);
    if (beta == T(0)) {
      y.setZero();
    } else {
      y *= beta;
    }
    return;
  }
  axpby(T(0), ConstView<T>(Y), beta, Y, false, ctx);
}

#define STROP_INSTANTIATE(T)                                                              \
  template void axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, \
                      Context& ctx);                                                      \
  template void scale(T beta, MatrixView<T> Y, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
