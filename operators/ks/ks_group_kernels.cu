// Small kernels behind the GEMM-based KS paths: the pointer arrays of a grouped GEMM, the
// row permutations of the Bmm baseline and the change of memory order of StridedGemm on
// batch-first signals.
#include <algorithm>
#include <cstdint>

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

// One 32 x 32 tile per block and step (32 x 8 threads, four rows each): loaded with the
// threads along the source's contiguous axis, stored along the destination's. W: an
// unsigned word of the element's size (values are only moved).
constexpr int kRelayoutTile = 32;
template <class W>
__global__ void relayout_kernel(const W* src, Index s_rs, Index s_cs, W* dst, Index d_rs,
                                Index d_cs, Index rows, Index cols, bool src_rows_fast,
                                bool dst_rows_fast) {
  __shared__ W tile[kRelayoutTile][kRelayoutTile + 1];  // [slow][fast] of the source
  const Index tiles_c = (cols + kRelayoutTile - 1) / kRelayoutTile;
  const Index tiles = tiles_c * ((rows + kRelayoutTile - 1) / kRelayoutTile);
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  for (Index t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Index r0 = (t / tiles_c) * kRelayoutTile, c0 = (t % tiles_c) * kRelayoutTile;
    for (int k = ty; k < kRelayoutTile; k += 8) {
      const Index r = r0 + (src_rows_fast ? tx : k), c = c0 + (src_rows_fast ? k : tx);
      if (r < rows && c < cols) tile[k][tx] = src[r * s_rs + c * s_cs];
    }
    __syncthreads();
    for (int k = ty; k < kRelayoutTile; k += 8) {
      // Element (local row lr, local column lc) sits at tile[lc][lr] when the source is
      // contiguous along its rows, else at tile[lr][lc].
      const int lr = dst_rows_fast ? tx : k, lc = dst_rows_fast ? k : tx;
      const Index r = r0 + lr, c = c0 + lc;
      if (r < rows && c < cols)
        dst[r * d_rs + c * d_cs] = src_rows_fast ? tile[lc][lr] : tile[lr][lc];
    }
    __syncthreads();
  }
}

template <class W>
void launch_relayout(const void* src, Index s_rs, Index s_cs, void* dst, Index d_rs, Index d_cs,
                     Index rows, Index cols, Context& ctx) {
  const Index tiles =
      ((rows + kRelayoutTile - 1) / kRelayoutTile) * ((cols + kRelayoutTile - 1) / kRelayoutTile);
  const auto blocks = static_cast<unsigned>(std::min<Index>(tiles, Index(1) << 20));
  // A view of one row or column reports either stride as "contiguous": rows are the fast
  // axis when the row stride is 1 and there is more than one row.
  const bool src_rows_fast = s_rs == 1 && rows > 1, dst_rows_fast = d_rs == 1 && rows > 1;
  relayout_kernel<W>
      <<<blocks, dim3(kRelayoutTile, 8), 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          static_cast<const W*>(src), s_rs, s_cs, static_cast<W*>(dst), d_rs, d_cs, rows, cols,
          src_rows_fast, dst_rows_fast);
  check_launch("relayout_kernel");
}

}  // namespace

void ks_relayout(const void* src, Index s_rs, Index s_cs, void* dst, Index d_rs, Index d_cs,
                 Index rows, Index cols, int element_bytes, Context& ctx) {
  if (rows == 0 || cols == 0) return;
  switch (element_bytes) {
    case 2:
      return launch_relayout<uint16_t>(src, s_rs, s_cs, dst, d_rs, d_cs, rows, cols, ctx);
    case 4:
      return launch_relayout<uint32_t>(src, s_rs, s_cs, dst, d_rs, d_cs, rows, cols, ctx);
    case 8:
      return launch_relayout<unsigned long long>(src, s_rs, s_cs, dst, d_rs, d_cs, rows, cols, ctx);
    case 16:
      return launch_relayout<ulonglong2>(src, s_rs, s_cs, dst, d_rs, d_cs, rows, cols, ctx);
  }
  throw DeviceError(concat("ks relayout: no kernel for ", element_bytes, "-byte elements"));
}

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
