#pragma once
// Low-rank approximation A ≈ L R: the truncated SVD (optimal), or the randomized SVD
// (Halko, Martinsson, Tropp) for large matrices, with a fixed rank or a relative tolerance.
#include <cstdint>

#include "strop/factorize/report.hpp"
#include "strop/operators/lowrank.hpp"

namespace strop {

enum class LowRankMethod {
  automatic,   // randomized when min(M, N) > 1024 and the rank is below min(M, N) / 8
  exact,       // full SVD, truncated
  randomized,  // range finder with power iterations, then an SVD of the small projection
};

struct LowRankOptions {
  // The rank; 0 means "the smallest rank meeting `tolerance`".
  Index rank = 0;
  // Relative Frobenius tolerance ||A - L R|| <= tolerance ||A|| (used when rank == 0).
  double tolerance = 0;
  LowRankMethod method = LowRankMethod::automatic;
  Index oversampling = 10;     // randomized: extra sample columns
  Index power_iterations = 2;  // randomized: (A A^H)^q sharpens a slowly decaying spectrum
  Index block_size = 32;       // randomized with a tolerance: columns added per round
  std::uint64_t seed = 0;
  bool compute_error = true;
  Device device = Device::cpu;
};

template <class T>
struct LowRankFactorization {
  LowRank<T> lowrank;
  FactorReport report;  // exact SVD: bound = the optimal error (Eckart–Young)
};

// left = U Σ^{1/2}, right = Σ^{1/2} V^H. ShapeError when neither a rank >= 1 nor a tolerance
// in (0, 1) is given, the rank is negative or exceeds min(M, N), oversampling or
// power_iterations is negative or block_size < 1; NumericalError on NaN/Inf.
template <class T>
LowRankFactorization<T> factorize_lowrank(const HostMatrix<T>& A, const LowRankOptions& options,
                                          Context& ctx = default_context());

}  // namespace strop
