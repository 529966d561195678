#pragma once
// Internal: the Walsh-Hadamard kernel (hadamard_kernel.cu) that applies the chains hadamard()
// builds on the GPU, for float, half and bfloat16 signals (fp32 arithmetic).
#include <cstddef>

#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/hadamard_form.hpp"

namespace strop::detail {

// Whether the kernel takes a transform of this form on signals stored with these strides and
// scalar size: one stride must be 1 (either layout), and with contiguous signals (row stride
// 1) a whole signal must fit in the device's shared memory (on sm_90 n <= 32768 for n = 2^k;
// 12 x 2^12 and the like fit too; less on devices with less). Batch-contiguous signals of any
// supported size are transformed in one or more passes over memory, each on a digit of the index.
bool hadamard_device_supported(const HadamardForm& form, Index row_stride, Index col_stride);

// Whether hadamard_device_apply takes these views: the CUDA-core kernel's cases above, and
// for half/bfloat16 also the tensor-core kernel's (hadamard_mma.hpp: 28 x 2048, for one, fits
// only there).
template <class Storage>
bool hadamard_device_takes(const HadamardForm& form, ConstView<Storage> X, MatrixView<Storage> Y);

// Y = alpha op(H) X + beta Y with H the matrix of `form`, X and Y device views that do not
// overlap. Storage is float, half or bfloat16. Contiguous 16-bit signals that the
// tensor-core kernel takes (hadamard_mma.hpp) go there; the rest to the CUDA-core kernel
// below. DeviceError unless hadamard_device_takes.
template <class Storage>
void hadamard_device_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                           MatrixView<Storage> Y, float alpha, float beta, Context& ctx);

// The CUDA-core kernel alone (every supported case; tests and benchmarks compare with it):
// the arithmetic is fp32 and each output is rounded once, except that batch-contiguous
// signals needing several passes round the intermediate result to the storage type.
template <class Storage>
void hadamard_cuda_core_apply(const HadamardForm& form, Op op, ConstView<Storage> X,
                              MatrixView<Storage> Y, float alpha, float beta, Context& ctx);

}  // namespace strop::detail
