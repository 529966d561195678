#pragma once
// Batched one-sided Jacobi SVD on the GPU (internal header, CUDA builds): one thread block
// factors one block held whole in shared memory, reading it in place from a larger
// matrix, so that the many small SVDs of a butterfly split or a Monarch projection need
// neither a gather pass nor a round trip through cuSOLVER's workspace.
#if STROP_HAVE_CUDA
#include <cstddef>

#include "factorize/svd/block_svd.hpp"

namespace strop::detail {

// Whether blocks of rows x cols (either orientation) of a scalar of `scalar_bytes` fit in
// the shared memory of one thread block on the current device.
bool jacobi_svd_fits(Index rows, Index cols, std::size_t scalar_bytes);

// Where the blocks are on the device: block q has entries
//   base[(row0[q] + i * row_stride) + (col0[q] + j * col_stride) * ld],  i < rows, j < cols;
// row0 == col0 == nullptr means blocks stored one after the other (column-major, ld = rows).
template <class T>
struct DeviceBlocks {
  const T* base = nullptr;
  Index ld = 0;
  const Index* row0 = nullptr;
  const Index* col0 = nullptr;
  Index row_stride = 1;
  Index col_stride = 1;
};

// Fills u, s, vh and dropped of `out` (allocated, count/rows/cols/rank set) with the
// truncated SVDs of the blocks; returns the blocks' total squared Frobenius norm.
// NumericalError when a block holds NaN or Inf. `dropped` is the sum of the squares of
// the singular values left out, not a difference of norms, so it keeps its digits.
template <class T>
double jacobi_block_svd_cuda(const DeviceBlocks<T>& blocks, BlockSvd<T>& out, Context& ctx);

// The same for blocks read in place from a column-major host matrix: the matrix goes up
// in column panels on a second stream, and the blocks of a panel are factored (on the
// context's stream) as soon as their last column is there.
template <class T>
double jacobi_block_svd_from_host(const StridedBlocks<T>& blocks, BlockSvd<T>& out, Context& ctx);

}  // namespace strop::detail
#endif
