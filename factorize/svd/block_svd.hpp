#pragma once
// Truncated SVDs of many independent blocks of one size: the kernel that the KS two-factor
// solver, the Monarch projection and the Kronecker rearrangement all reduce to
// (internal header).
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

// CPU (Eigen, OpenMP over blocks) or CUDA (cuSOLVER batched Jacobi / approximate SVD).
// DeviceError for Device::cuda without a CUDA build or device.
template <class T>
BlockSvd<T> block_svd(const std::vector<T>& blocks, Index count, Index rows, Index cols, Index rank,
                      Device device, Context& ctx);

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
