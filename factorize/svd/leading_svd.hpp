#pragma once
// The leading singular triples of one block without its full SVD (internal header): the
// butterfly and Monarch projections keep a few triples of many blocks (rank 1 of 64 x 64
// blocks for a 4096 butterfly or a b = 64 Monarch), where a full SVD does ten times the work.
#include <optional>

#include "strop/core/scalar.hpp"

namespace strop::detail {

// For the rows x cols column-major `block` and rank <= min(rows, cols): u (rows x rank), s
// (rank, descending) and vh (rank x cols) of its best rank-`rank` approximation, all
// column-major. Returns the squared Frobenius norm of what is left out. At
// O(rows cols min(rows, cols)) cost with a small constant; worthwhile when rank is well below
// min(rows, cols). Returns nothing (and leaves u, s, vh unspecified) when it cannot certify
// that what it leaves out exceeds the optimum by at most a thousandth, or by rounding where
// the block is captured to rounding (exactly low-rank blocks come back exact); the caller then
// takes a full SVD. The Gram resolves only singular values above about
// sqrt(1e3 (rows + cols) eps) ||A||_F (5e-6 ||A||_F for 64 x 64 blocks): blocks whose
// sigma_rank is below that, and not captured to rounding, take the full SVD.
// T is double or std::complex<double> (truncated_svd_cpu widens float blocks).
template <class T>
std::optional<double> leading_svd(const T* block, Index rows, Index cols, Index rank, T* u,
                                  RealOf<T>* s, T* vh);

}  // namespace strop::detail
