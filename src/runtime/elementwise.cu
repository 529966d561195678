// Device element-wise updates: Y = alpha * f(X) + beta * Y on strided views.
#include <complex>
#include <cstring>

#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"
#include "strop/core/timing.hpp"
#include "strop/expr/elementwise.hpp"

namespace strop::detail {
namespace {

// Row r of Y takes row from[r] of X (row r without `from`), times scale[r] when given.
template <class D>
__global__ void axpby_kernel(D alpha, const D* x, Index x_rs, Index x_cs, D beta, D* y, Index y_rs,
                             Index y_cs, Index rows, Index cols, bool conjugate_x,
                             const Index* from, const D* scale) {
  const Index total = rows * cols;
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < total;
       i += Index(gridDim.x) * blockDim.x) {
    const auto [r, c] = element_in_memory_order(i, rows, cols, y_rs);  // stores coalesce
    D xv = x[(from ? from[r] : r) * x_rs + c * x_cs];
    if (conjugate_x) xv = conjugate(xv);
    if (scale) xv = mul(scale[r], xv);
    D& yv = y[r * y_rs + c * y_cs];
    const D ax = is_zero(alpha) ? D{} : mul(alpha, xv);
    yv = is_zero(beta) ? ax : add(ax, mul(beta, yv));
  }
}

template <class T>
void launch_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x,
                  const Index* from, const T* scale, Context& ctx) {
  using D = DeviceScalar<T>;
  const Index total = Y.rows * Y.cols;
  if (total == 0) return;
  const int threads = 256;
  const Index blocks = std::min<Index>((total + threads - 1) / threads, 65535);
  const D a = to_device_scalar(alpha), b = to_device_scalar(beta);
  axpby_kernel<D>
      <<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          a, reinterpret_cast<const D*>(X.data), X.row_stride, X.col_stride, b,
          reinterpret_cast<D*>(Y.data), Y.row_stride, Y.col_stride, Y.rows, Y.cols, conjugate_x,
          from, reinterpret_cast<const D*>(scale));
  check_launch("axpby_kernel");
}

}  // namespace

template <class T>
void device_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x,
                  Context& ctx) {
  launch_axpby(alpha, X, beta, Y, conjugate_x, nullptr, static_cast<const T*>(nullptr), ctx);
}

template <class T>
void device_gather_rows(T alpha, ConstView<T> X, const Index* from, T beta, MatrixView<T> Y,
                        Context& ctx) {
  launch_axpby(alpha, X, beta, Y, false, from, static_cast<const T*>(nullptr), ctx);
}

template <class T>
void device_scale_rows(T alpha, const T* row_scale, ConstView<T> X, T beta, MatrixView<T> Y,
                       Context& ctx) {
  launch_axpby(alpha, X, beta, Y, false, nullptr, row_scale, ctx);
}

namespace {
template <class From, class To>
__global__ void convert_kernel(const From* x, Index x_rs, Index x_cs, float beta, To* y, Index y_rs,
                               Index y_cs, Index rows, Index cols) {
  const Index total = rows * cols;
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < total;
       i += Index(gridDim.x) * blockDim.x) {
    const auto [r, c] = element_in_memory_order(i, rows, cols, y_rs);
    To* out = y + r * y_rs + c * y_cs;
    const float v = float(load_value(x + r * x_rs + c * x_cs));
    store_value(out, beta == 0.0f ? v : v + beta * float(load_value(out)));
  }
}
}  // namespace

template <class From, class To>
void device_convert(ConstView<From> X, float beta, MatrixView<To> Y, Context& ctx) {
  using DF = DeviceScalar<From>;
  using DT = DeviceScalar<To>;
  const Index total = Y.rows * Y.cols;
  if (total == 0) return;
  const Index blocks = std::min<Index>((total + 255) / 256, 65535);
  convert_kernel<DF, DT>
      <<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          reinterpret_cast<const DF*>(X.data), X.row_stride, X.col_stride, beta,
          reinterpret_cast<DT*>(Y.data), Y.row_stride, Y.col_stride, Y.rows, Y.cols);
  check_launch("convert_kernel");
}
template void device_convert(ConstView<half>, float, MatrixView<float>, Context&);
template void device_convert(ConstView<bfloat16>, float, MatrixView<float>, Context&);
template void device_convert(ConstView<float>, float, MatrixView<half>, Context&);
template void device_convert(ConstView<float>, float, MatrixView<bfloat16>, Context&);

#define STROP_INSTANTIATE(T)                                                                     \
  template void device_axpby(T alpha, ConstView<T> X, T beta, MatrixView<T> Y, bool conjugate_x, \
                             Context& ctx);                                                      \
  template void device_gather_rows(T alpha, ConstView<T> X, const Index* from, T beta,           \
                                   MatrixView<T> Y, Context& ctx);                               \
  template void device_scale_rows(T alpha, const T* row_scale, ConstView<T> X, T beta,           \
                                  MatrixView<T> Y, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail

// ---- random fill for benchmarks (strop/core/timing.hpp) ----
namespace strop {
namespace {
__device__ __forceinline__ float hash_uniform(unsigned long long x) {
  // splitmix64: a well-mixed 64-bit hash; the top 24 bits become a float in [-1, 1).
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return float(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}
template <class R>
__device__ __forceinline__ void set_random(R& v, unsigned long long key) {
  v = R(hash_uniform(key));
}
template <class R>
__device__ __forceinline__ void set_random(detail::DeviceComplex<R>& v, unsigned long long key) {
  v.re = R(hash_uniform(2 * key));
  v.im = R(hash_uniform(2 * key + 1));
}
__device__ __forceinline__ void set_random(__half& v, unsigned long long key) {
  v = __float2half_rn(hash_uniform(key));
}
__device__ __forceinline__ void set_random(__nv_bfloat16& v, unsigned long long key) {
  v = __float2bfloat16_rn(hash_uniform(key));
}
template <class D>
__global__ void fill_random_kernel(D* data, Index rs, Index cs, Index rows, Index cols,
                                   unsigned long long seed) {
  const Index total = rows * cols;
  for (Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x; e < total;
       e += Index(gridDim.x) * blockDim.x) {
    const auto [r, c] = detail::element_in_memory_order(e, rows, cols, rs);
    set_random(data[r * rs + c * cs], seed * 0x100000001B3ull + static_cast<unsigned long long>(e));
  }
}
}  // namespace

template <class T>
void fill_random_device(MatrixView<T> view, unsigned long long seed, Context& ctx) {
  using D = detail::DeviceScalar<T>;
  const Index total = view.rows * view.cols;
  if (total == 0) return;
  const detail::DeviceScope device_scope;
  const Index blocks = std::min<Index>((total + 255) / 256, 65535 * 8);
  fill_random_kernel<D>
      <<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          reinterpret_cast<D*>(view.data), view.row_stride, view.col_stride, view.rows, view.cols,
          seed);
  detail::check_launch("fill_random_kernel");
}
#define STROP_INSTANTIATE_FILL(T) \
  template void fill_random_device(MatrixView<T> view, unsigned long long seed, Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE_FILL)
STROP_INSTANTIATE_FILL(half)
STROP_INSTANTIATE_FILL(bfloat16)
}  // namespace strop
