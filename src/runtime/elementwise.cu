// Device element-wise updates: Y = alpha * f(X) + beta * Y on strided views.
#include <cuComplex.h>

#include <complex>
#include <cstring>

#include "runtime/cuda_check.hpp"
#include "strop/expr/elementwise.hpp"

namespace strop::detail {
namespace {

// CUDA-side twins of the host scalar types (same layout as std::complex).
template <class T>
struct DeviceScalar {
  using type = T;
};
template <>
struct DeviceScalar<std::complex<float>> {
  using type = cuFloatComplex;
};
template <>
struct DeviceScalar<std::complex<double>> {
  using type = cuDoubleComplex;
};

__device__ inline float mul(float a, float b) {
  return a * b;
}
__device__ inline double mul(double a, double b) {
  return a * b;
}
__device__ inline cuFloatComplex mul(cuFloatComplex a, cuFloatComplex b) {
  return cuCmulf(a, b);
}
__device__ inline cuDoubleComplex mul(cuDoubleComplex a, cuDoubleComplex b) {
  return cuCmul(a, b);
}
__device__ inline float add(float a, float b) {
  return a + b;
}
__device__ inline double add(double a, double b) {
  return a + b;
}
__device__ inline cuFloatComplex add(cuFloatComplex a, cuFloatComplex b) {
  return cuCaddf(a, b);
}
__device__ inline cuDoubleComplex add(cuDoubleComplex a, cuDoubleComplex b) {
  return cuCadd(a, b);
}
__device__ inline float conjugate(float a) {
  return a;
}
__device__ inline double conjugate(double a) {
  return a;
}
__device__ inline cuFloatComplex conjugate(cuFloatComplex a) {
  return cuConjf(a);
}
__device__ inline cuDoubleComplex conjugate(cuDoubleComplex a) {
  return cuConj(a);
}
template <class D>
__device__ inline bool is_zero(D a) {
  if constexpr (std::is_same_v<D, cuFloatComplex> || std::is_same_v<D, cuDoubleComplex>) {
    return a.x == 0 && a.y == 0;
  } else {
    return a == 0;
  }
}

template <class D>
__global__ void axpby_kernel(D alpha, const D* x, Index x_rs, Index x_cs, D beta, D* y, Index y_rs,
                             Index y_cs, Index rows, Index cols, bool conjugate_x) {
  const Index total = rows * cols;
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < total;
       i += Index(gridDim.x) * blockDim.x) {
    // Walk in the memory order of y so that stores coalesce.
    const bool y_col_major = y_rs == 1;
    const Index r = y_col_major ? i % rows : i / cols;
    const Index c = y_col_major ? i / rows : i % cols;
    D xv = x[r * x_rs + c * x_cs];
    if (conjugate_x) xv = conjugate(xv);
    D& yv = y[r * y_rs + c * y_cs];
    const D ax = is_zero(alpha) ? D{} : mul(alpha, xv);
    yv = is_zero(beta) ? ax : add(ax, mul(beta, yv));
  }
}

}  // namespace

template <class T>
void device_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x,
                  Context& ctx) {
  using D = typename DeviceScalar<T>::type;
  const Index total = Y.rows * Y.cols;
  if (total == 0) return;
  const int threads = 256;
  const Index blocks = std::min<Index>((total + threads - 1) / threads, 65535);
  D a, b;
  std::memcpy(&a, &alpha, sizeof(T));
  std::memcpy(&b, &beta, sizeof(T));
  axpby_kernel<D>
      <<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          a, reinterpret_cast<const D*>(X.data), X.row_stride, X.col_stride, b,
          reinterpret_cast<D*>(Y.data), Y.row_stride, Y.col_stride, Y.rows, Y.cols, conjugate_x);
  check_launch("axpby_kernel");
}

#define STROP_INSTANTIATE(T)                                                                     \
  template void device_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, \
                             Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
