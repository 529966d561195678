#pragma once
// Truncated SVDs of many independent blocks of one size: the kernel that the KS two-factor
// solver, the Monarch projection and the Kronecker rearrangement all reduce to
// (internal header).
#include <optional>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/scalar.hpp"
#include "strop/factorize/report.hpp"

namespace strop::detail {

// For block q (rows x cols, column-major at blocks[q * rows * cols]):
//   block ≈ U_q diag(s_q) V_q^H with U_q rows x rank, V_q^H rank x cols,
// singular values descending; a rank above min(rows, cols) gets zero columns/rows.
template <class T>
struct BlockSvd {
  Index count = 0;
  Index rows = 0;
  Index cols = 0;
  Index rank = 0;
  std::vector<T> u;             // U_q at q * rows * rank, column-major
  std::vector<RealOf<T>> s;     // s_q at q * rank
  std::vector<T> vh;            // V_q^H at q * rank * cols, column-major
  std::vector<double> dropped;  // ||block_q||^2 - ||s_q||^2: the squared truncation error

  T* u_block(Index q) { return u.data() + q * rows * rank; }
  T* vh_block(Index q) { return vh.data() + q * rank * cols; }
  const T* u_block(Index q) const { return u.data() + q * rows * rank; }
  const T* vh_block(Index q) const { return vh.data() + q * rank * cols; }
  const RealOf<T>* s_block(Index q) const { return s.data() + q * rank; }
};

// Zero triples for `count` blocks of rows x cols, ready to be filled.
template <class T>
BlockSvd<T> empty_block_svd(Index count, Index rows, Index cols, Index rank);

// CPU (Eigen, OpenMP over blocks) or CUDA (our batched Jacobi kernel for blocks that fit in
// shared memory, else cuSOLVER's batched Jacobi / approximate SVD; the rare block cuSOLVER
// reports as failed is redone on the CPU). DeviceError for Device::cuda
// without a CUDA build or device.
template <class T>
BlockSvd<T> block_svd(const std::vector<T>& blocks, Index count, Index rows, Index cols, Index rank,
                      Device device, Context& ctx);

// Blocks read in place from a column-major host matrix (matrix_rows x matrix_cols at
// `matrix`): block q holds the entries (row0[q] + i * row_stride, col0[q] + j * col_stride),
// i < rows, j < cols.
template <class T>
struct StridedBlocks {
  const T* matrix = nullptr;
  Index matrix_rows = 0, matrix_cols = 0;
  std::vector<Index> row0, col0;
  Index rows = 0, cols = 0, row_stride = 1, col_stride = 1;
};

// The Device::cuda path for blocks read in place: the matrix goes to the device once and
// the batched Jacobi SVD (jacobi_svd.hpp) reads every block from there, so nothing is
// gathered on the host. nullopt when blocks of this size do not fit that kernel's shared
// memory (then gather them and call block_svd). `covered` receives the blocks' total
// squared norm; NumericalError when a block holds NaN or Inf.
template <class T>
std::optional<BlockSvd<T>> block_svd_in_place(const StridedBlocks<T>& blocks, Index rank,
                                              double& covered, Context& ctx);

// One block on the CPU: u (rows x rank), s, vh (rank x cols) as in BlockSvd, which must
// hold room for them; returns the squared truncation error.
template <class T>
double truncated_svd_cpu(const T* block, Index rows, Index cols, Index rank, T* u, RealOf<T>* s,
                         T* vh);

#if STROP_HAVE_CUDA
// The cuSOLVER path (block_svd_cusolver.cu); fills u, s, vh of an allocated result.
template <class T>
void block_svd_cuda(const std::vector<T>& blocks, BlockSvd<T>& out, Context& ctx);
#endif

// Splits the singular values between the factors: U diag(s^(1-beta)) and diag(s^beta) V^H.
// beta = 1 keeps U orthonormal; beta = 1/2 balances the two factors.
template <class T>
void distribute_singular_values(BlockSvd<T>& svd, double beta);

}  // namespace strop::detail
