// The BLR GEMM plans' device kernels (blr_plan_kernels.hpp): pointer arrays of two-level
// batches, and the unfused baselines' strided copies (16-bit values scaled in fp32): runs
// along a dimension contiguous in dst, or 32 x 32 tiles through shared memory where the
// dimension contiguous in src is another one (what PyTorch's permute().contiguous() does
// too), so that both sides move whole memory segments.
#include <type_traits>

#include "operators/blr/blr_plan_kernels.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_scalar.cuh"

namespace strop::detail {
namespace {

constexpr int kThreads = 256;

__global__ void two_level_pointers(const TwoLevelPointers p) {
  const Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= p.count) return;
  const Index outer = e / p.inner, inner = e - outer * p.inner;
#pragma unroll
  for (int q = 0; q < 3; ++q)
    p.out[q][e] = p.base[q] + outer * p.outer[q] + inner * p.stride[q];
}

template <class S>
using CopyCompute = std::conditional_t<std::is_same_v<S, double>, double, float>;

// *out = v, or alpha v (+ beta *out) when the copy is `scaled`, in fp32 (fp64 for double).
template <class S>
__device__ __forceinline__ void store_copied(const StridedCopy& c, S* out, CopyCompute<S> v) {
  using Compute = CopyCompute<S>;
  if (!c.scaled) {
    store_value(out, v);
  } else if (c.beta == 0) {
    store_value(out, Compute(c.alpha) * v);
  } else {
    store_value(out, Compute(c.alpha) * v + Compute(c.beta) * Compute(load_value(out)));
  }
}

// Which dimension the threads of a block walk, and which index the blocks. Splitting a
// block's index costs a few divisions per block, none per value.
struct CopyAxes {
  int inner;     // the dimension threadIdx.x walks (transpose: when reading src)
  int across;    // transpose: the dimension contiguous in dst, walked when writing
  int outer[3];  // the others, N of them (runs: 3, transpose: 2)
};

template <int N>
__device__ __forceinline__ void split_block(const StridedCopy& c, Index block, const CopyAxes& axes,
                                            Index& src_offset, Index& dst_offset) {
  src_offset = dst_offset = 0;
#pragma unroll
  for (int k = N - 1; k >= 0; --k) {
    const int dim = axes.outer[k];
    const Index i = block % c.dims[dim];
    block /= c.dims[dim];
    src_offset += i * c.src_strides[dim];
    dst_offset += i * c.dst_strides[dim];
  }
}

// Copies where one dimension is contiguous in dst (and in src, or nowhere): kRows runs per
// block, threadIdx.x along the run, so both sides are read or written in whole segments.
constexpr int kRows = 8;
template <class S>
__global__ void strided_runs_kernel(const StridedCopy c, const CopyAxes axes, Index rows) {
  const Index row = Index(blockIdx.x) * kRows + threadIdx.y;
  if (row >= rows) return;
  Index s, d;
  split_block<3>(c, row, axes, s, d);
  const S* src = static_cast<const S*>(c.src) + s;
  S* dst = static_cast<S*>(c.dst) + d;
  const Index n = c.dims[axes.inner], ss = c.src_strides[axes.inner],
              ds = c.dst_strides[axes.inner];
  for (Index i = threadIdx.x; i < n; i += 32)
    store_copied(c, dst + i * ds, CopyCompute<S>(load_value(src + i * ss)));
}

// Copies that turn the dimension contiguous in src (axes.inner) into another one contiguous
// in dst (axes.across): 32 x 32 tiles through shared memory (padded against bank
// conflicts), read along inner and written along across.
template <class S>
__global__ void strided_transpose_kernel(const StridedCopy c, const CopyAxes axes) {
  using Compute = CopyCompute<S>;
  __shared__ Compute tile[32][33];
  const Index n_in = c.dims[axes.inner], n_across = c.dims[axes.across];
  const Index tiles_in = (n_in + 31) / 32, tiles_across = (n_across + 31) / 32;
  Index block = blockIdx.x;
  const Index t_in = block % tiles_in;
  block /= tiles_in;
  const Index t_across = block % tiles_across;
  block /= tiles_across;
  Index s, d;
  split_block<2>(c, block, axes, s, d);
  const S* src = static_cast<const S*>(c.src) + s;
  S* dst = static_cast<S*>(c.dst) + d;
  const Index in0 = t_in * 32, across0 = t_across * 32;
  for (int y = int(threadIdx.y); y < 32; y += kRows) {
    const Index i = in0 + threadIdx.x, a = across0 + y;
    if (i < n_in && a < n_across)
      tile[y][threadIdx.x] = Compute(load_value(src + i + a * c.src_strides[axes.across]));
  }
  __syncthreads();
  for (int y = int(threadIdx.y); y < 32; y += kRows) {
    const Index a = across0 + threadIdx.x, i = in0 + y;
    if (i < n_in && a < n_across)
      store_copied(c, dst + a + i * c.dst_strides[axes.inner], tile[threadIdx.x][y]);
  }
}

}  // namespace

void make_two_level_pointers(const TwoLevelPointers& p, Context& ctx) {
  if (p.count == 0) return;
  const auto blocks = unsigned((p.count + kThreads - 1) / kThreads);
  two_level_pointers<<<blocks, kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(p);
  check_launch("two_level_pointers");
}

// The first dimension (of more than one value) with stride 1, or -1.
int unit_stride_dim(const StridedCopy& c, const Index (&strides)[4]) {
  for (int k = 3; k >= 0; --k)
    if (strides[k] == 1 && c.dims[k] > 1) return k;
  return -1;
}

template <class Storage>
void strided_copy(const StridedCopy& c, Context& ctx) {
  const Index total = c.dims[0] * c.dims[1] * c.dims[2] * c.dims[3];
  if (total == 0) return;
  using S = DeviceScalar<Storage>;
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  const int src_unit = unit_stride_dim(c, c.src_strides),
            dst_unit = unit_stride_dim(c, c.dst_strides);
  CopyAxes axes{};
  auto set_outer = [&](int skip1, int skip2) {  // the dimensions left, in order
    int n = 0;
    for (int k = 0; k < 4; ++k)
      if (k != skip1 && k != skip2) axes.outer[n++] = k;
  };
  if (src_unit >= 0 && dst_unit >= 0 && src_unit != dst_unit) {
    axes.inner = src_unit, axes.across = dst_unit;
    set_outer(src_unit, dst_unit);
    const Index outer = c.dims[axes.outer[0]] * c.dims[axes.outer[1]];
    const Index blocks = ((c.dims[src_unit] + 31) / 32) * ((c.dims[dst_unit] + 31) / 32) * outer;
    require<DeviceError>(blocks < (Index(1) << 31), "strided copy: too many tiles");
    strided_transpose_kernel<S><<<unsigned(blocks), dim3(32, kRows), 0, stream>>>(c, axes);
  } else {
    axes.inner = dst_unit >= 0 ? dst_unit : (src_unit >= 0 ? src_unit : 3);
    set_outer(axes.inner, axes.inner);
    const Index rows = total / c.dims[axes.inner];
    const Index blocks = (rows + kRows - 1) / kRows;
    require<DeviceError>(blocks < (Index(1) << 31), "strided copy: too many rows");
    strided_runs_kernel<S><<<unsigned(blocks), dim3(32, kRows), 0, stream>>>(c, axes, rows);
  }
  check_launch("strided_copy");
}

template void strided_copy<float>(const StridedCopy&, Context&);
template void strided_copy<double>(const StridedCopy&, Context&);
template void strided_copy<half>(const StridedCopy&, Context&);
template void strided_copy<bfloat16>(const StridedCopy&, Context&);

}  // namespace strop::detail
