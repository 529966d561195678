#pragma once
// Low-rank approximation A ≈ L R: the truncated SVD (optimal), or the randomized SVD
// (Halko, Martinsson, Tropp) for large matrices, with a fixed rank or a relative tolerance.
#include <cstdint>

#include "strop/factorize/report.hpp"
#include "strop/operators/lowrank.hpp"

namespace strop {

enum class LowRankMethod {
  // exact when min(M, N) <= 1024. Above that, randomized for every tolerance run (rank == 0,
  // whatever the tolerance) and for a rank below min(M, N) / 8 (integer division), exact for
  // a larger rank.
  automatic,
  // full SVD, truncated: the optimal approximation (Eckart–Young); report.bound and
  // report.lower_bound are its error
  exact,
  // range finder with power iterations, then an SVD of the small projection: near-optimal
  // but without a guarantee; report.bound and report.lower_bound are NaN
  randomized,
};

struct LowRankOptions {
  // The rank; 0 means "a rank chosen to meet `tolerance`". The exact SVD returns the
  // smallest such rank (the optimum). The randomized SVD grows an orthonormal basis Q of A's
  // range by `block_size` columns at a time until ||A - Q Q^H A|| <= tolerance ||A|| (or Q has
  // min(M, N) columns), then returns the smallest rank k with ||A - Q [Q^H A]_k|| <= tolerance
  // ||A|| ([.]_k: truncated SVD). That meets the tolerance but is only the smallest rank
  // within span(Q), at most Q's column count: it can exceed the optimum (70 instead of 64 for
  // a noisy rank-8 1100 x 1030 matrix at tolerance 9e-4). `automatic` takes this path for
  // every tolerance run with min(M, N) > 1024.
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
  // exact SVD: bound = lower_bound = the optimal error (Eckart–Young); randomized: both NaN
  FactorReport report;
};

// left = U Σ^{1/2}, right = Σ^{1/2} V^H. ShapeError when neither a rank >= 1 nor a tolerance
// in (0, 1) is given, the rank is negative or exceeds min(M, N), oversampling or
// power_iterations is negative, block_size < 1 or method is not a LowRankMethod value;
// NumericalError on NaN/Inf.
template <class T>
LowRankFactorization<T> factorize_lowrank(const HostMatrix<T>& A, const LowRankOptions& options,
                                          Context& ctx = default_context());

}  // namespace strop
