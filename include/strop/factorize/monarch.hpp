#pragma once
// Monarch projection (papers/NOTES.md, paper 004 §3): the Frobenius-optimal Monarch (block
// low-rank) approximation, one truncated SVD per block. Any row_blocks x col_blocks grid
// dividing the shape, rectangular matrices, any rank per block.
#include "strop/factorize/report.hpp"
#include "strop/operators/monarch.hpp"

namespace strop {

struct MonarchFactorizeOptions {
  // Measure report.relative_error (one dense evaluation).
  bool compute_error = true;
  Device device = Device::cpu;
};

template <class T>
struct MonarchFactorization {
  Monarch<T> monarch;
  FactorReport report;  // bound = the optimal error, which the projection attains
};

// Block (k, l) ≈ L_{k,l} R_{k,l} from its rank-`rank` truncated SVD U Σ V^H, with
// L = U Σ^{1/2} and R = Σ^{1/2} V^H. ShapeError when the grid does not divide A or rank < 1;
// NumericalError on NaN/Inf.
template <class T>
MonarchFactorization<T> factorize_monarch(const HostMatrix<T>& A, Index row_blocks,
                                          Index col_blocks, Index rank,
                                          const MonarchFactorizeOptions& options = {},
                                          Context& ctx = default_context());

}  // namespace strop
