// The pointer arrays of a two-level batched GEMM (blr_gemm_cuda.cpp): entry e of operand q
// starts at base[q] + (e / inner) outer[q] + (e % inner) stride[q] (in bytes).
#include "operators/blr/blr_plan_pointers.hpp"
#include "runtime/cuda_check.hpp"

namespace strop::detail {
namespace {

__global__ void two_level_pointers(const TwoLevelPointers p) {
  const Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= p.count) return;
  const Index outer = e / p.inner, inner = e - outer * p.inner;
#pragma unroll
  for (int q = 0; q < 3; ++q)
    p.out[q][e] = p.base[q] + outer * p.outer[q] + inner * p.stride[q];
}

}  // namespace

void make_two_level_pointers(const TwoLevelPointers& p, Context& ctx) {
  if (p.count == 0) return;
  constexpr int kThreads = 256;
  const auto blocks = unsigned((p.count + kThreads - 1) / kThreads);
  two_level_pointers<<<blocks, kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(p);
  check_launch("two_level_pointers");
}

}  // namespace strop::detail
