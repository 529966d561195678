// The BLR GEMM plans' device kernels (blr_plan_kernels.hpp): pointer arrays of two-level
// batches, and the unfused baselines' strided copies (one thread per value, 16-bit values
// scaled in fp32).
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
__global__ void strided_copy_kernel(const StridedCopy c, Index total) {
  using Compute = std::conditional_t<std::is_same_v<S, double>, double, float>;
  const S* src = static_cast<const S*>(c.src);
  S* dst = static_cast<S*>(c.dst);
  for (Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += Index(gridDim.x) * blockDim.x) {
    Index rest = e, s = 0, d = 0;
    for (int k = 3; k >= 0; --k) {  // dimension 3 fastest
      const Index i = rest % c.dims[k];
      rest /= c.dims[k];
      s += i * c.src_strides[k];
      d += i * c.dst_strides[k];
    }
    const Compute v = Compute(load_value(src + s));
    if (!c.scaled) {
      store_value(dst + d, v);
    } else if (c.beta == 0) {
      store_value(dst + d, Compute(c.alpha) * v);
    } else {
      store_value(dst + d, Compute(c.alpha) * v + Compute(c.beta) * Compute(load_value(dst + d)));
    }
  }
}

}  // namespace

void make_two_level_pointers(const TwoLevelPointers& p, Context& ctx) {
  if (p.count == 0) return;
  const auto blocks = unsigned((p.count + kThreads - 1) / kThreads);
  two_level_pointers<<<blocks, kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(p);
  check_launch("two_level_pointers");
}

template <class Storage>
void strided_copy(const StridedCopy& c, Context& ctx) {
  const Index total = c.dims[0] * c.dims[1] * c.dims[2] * c.dims[3];
  if (total == 0) return;
  const Index blocks = std::min<Index>((total + kThreads - 1) / kThreads, Index(1) << 20);
  strided_copy_kernel<DeviceScalar<Storage>>
      <<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(c, total);
  check_launch("strided_copy");
}

template void strided_copy<float>(const StridedCopy&, Context&);
template void strided_copy<double>(const StridedCopy&, Context&);
template void strided_copy<half>(const StridedCopy&, Context&);
template void strided_copy<bfloat16>(const StridedCopy&, Context&);

}  // namespace strop::detail
