#pragma once
// Internal: the tensor-core Walsh-Hadamard kernel (hadamard_mma_kernel.cu) for contiguous
// half and bfloat16 signals. hadamard_device_apply (hadamard_kernel.cu) hands it the cases
// it takes and keeps the others.
#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/hadamard_form.hpp"

namespace strop::detail {

// Whether the tensor-core kernel takes this transform on these half or bfloat16 views: contiguous
// signals (row stride 1) starting on 16-byte boundaries (aligned data, column strides a
// multiple of 8 values), and n = 2^k with 256 <= n <= 32768 or n = m 2^k with m in
// {12, 20, 28} and 128 <= 2^k <= 2048, where a block's shared memory holds one signal (n >
// 2048 or m > 1; 28 x 2^11 takes 112 KB, more than sm_86/89 have).
template <class Storage>
bool hadamard_mma_takes(const HadamardForm& form, ConstView<Storage> X, MatrixView<Storage> Y);

// Y = alpha op(H) X + beta Y for views hadamard_mma_takes accepts (DeviceError otherwise).
// Tensor-core products in 16 bits with fp32 accumulation: the intermediate results are
// rounded to the storage type once per 8 bits of the index (and once after the digit of m
// or the top bits of n > 2048); the rest is fp32.
template <class Storage>
void hadamard_mma_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                        MatrixView<Storage> Y, float alpha, float beta, Context& ctx);

}  // namespace strop::detail
