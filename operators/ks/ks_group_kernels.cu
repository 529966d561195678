// Small kernels behind the GEMM-based KS paths: the pointer arrays of a grouped GEMM and
// the row permutations of the Bmm baseline.
#include "operators/ks/ks_group_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

__global__ void group_pointers_kernel(GroupPointerArgs p) {
  const Index g = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  if (g >= p.groups) return;
  const Index i = g / p.d, j = g % p.d;
  p.x_out[g] = p.x + (i * p.x_stride_i + j * p.x_stride_j) * p.element;
  p.y_out[g] = p.y + (i * p.y_stride_i + j * p.y_stride_j) * p.element;
  p.w_out[g] = p.w + g * p.w_stride * p.element;
}

// Row r of the grouped matrix (group g = i*d + j, member m) is row i*size*d + m*d + j of
// the original.
__device__ __forceinline__ Index original_row(Index grouped_row, Index size, Index d) {
  const Index g = grouped_row / size, m = grouped_row % size;
  return (g / d) * size * d + m * d + g % d;
}
__device__ __forceinline__ Index grouped_row(Index original, Index size, Index d) {
  const Index i = original / (size * d), m = (original / d) % size, j = original % d;
  return (i * d + j) * size + m;
}

// A: the arithmetic type (float for 16-bit storage D).
template <class D, class A>
__global__ void permute_rows_kernel(A alpha, const D* src, Index s_rs, Index s_cs, A beta, D* dst,
                                    Index d_rs, Index d_cs, Index rows, Index cols, Index size,
                                    Index d, bool to_grouped) {
  const Index total = rows * cols;
  for (Index e = blockIdx.x * Index(blockDim.x) + threadIdx.x; e < total;
       e += Index(gridDim.x) * blockDim.x) {
    const auto [r, c] = element_in_memory_order(e, rows, cols, d_rs);
    const Index s = to_grouped ? original_row(r, size, d) : grouped_row(r, size, d);
    A v = mul(alpha, load_value(src + s * s_rs + c * s_cs));
    D* out = dst + r * d_rs + c * d_cs;
    if (!is_zero(beta)) v = add(v, mul(beta, load_value(out)));
    store_value(out, v);
  }
}

}  // namespace

void ks_group_pointers(const GroupPointerArgs& args, Context& ctx) {
  if (args.groups == 0) return;
  const int threads = 256;
  group_pointers_kernel<<<static_cast<unsigned>((args.groups + threads - 1) / threads), threads, 0,
                          static_cast<cudaStream_t>(ctx.stream())>>>(args);
  check_launch("group_pointers_kernel");
}

template <class T>
void ks_permute_rows(ComputeScalar<T> alpha, ConstView<T> src, ComputeScalar<T> beta,
                     MatrixView<T> dst, Index size, Index d, bool to_grouped, Context& ctx) {
  using D = DeviceScalar<T>;
  const Index total = dst.rows * dst.cols;
  if (total == 0) return;
  const int threads = 256;
  const Index blocks = std::min<Index>((total + threads - 1) / threads, 65535 * 16);
  permute_rows_kernel<D>
      <<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          to_device_scalar(alpha), reinterpret_cast<const D*>(src.data), src.row_stride,
          src.col_stride, to_device_scalar(beta), reinterpret_cast<D*>(dst.data), dst.row_stride,
          dst.col_stride, dst.rows, dst.cols, size, d, to_grouped);
  check_launch("permute_rows_kernel");
}

#define STROP_INSTANTIATE(T)                                                                     \
  template void ks_permute_rows(ComputeScalar<T> alpha, ConstView<T> src, ComputeScalar<T> beta, \
                                MatrixView<T> dst, Index size, Index d, bool to_grouped,         \
                                Context& ctx);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop::detail
