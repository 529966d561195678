#include "strop/expr/elementwise.hpp"
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
  auto y = eigen_map(Y);
  auto x = eigen_map(X);
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
