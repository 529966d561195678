#pragma once
// What every factorization returns beside its operator: how good, how fast, how big, and
// what the theory promises. Shared by butterfly, Monarch, low-rank, Kronecker and BLAST.
#include <limits>
#include <string>

#include "strop/core/scalar.hpp"

namespace strop {

// Where a factorization runs. Device::cuda needs a CUDA build and a visible device
// (DeviceError otherwise); the results agree with Device::cpu within rounding.
enum class Device { cpu, cuda };

struct FactorReport {
  // ||A - Â||_F / ||A||_F, measured on the returned operator (NaN when the caller turned
  // the measurement off, e.g. to time large factorizations alone).
  double relative_error = std::numeric_limits<double>::quiet_NaN();
  // Wall-clock seconds of the factorization itself (the error measurement excluded).
  double seconds = 0;
  // Stored scalars of the returned operator.
  Index parameters = 0;
  // Relative error the theory guarantees for this input in exact arithmetic: an upper bound
  // on relative_error up to rounding (a bound of 0, an exact structure, comes with a
  // measured error at the rounding level of the scalar type; NaN where no bound is known).
  // Where the method is optimal (two-factor KS, Monarch projection, truncated SVD, nearest
  // Kronecker sum) it is the optimal error itself.
  double bound = std::numeric_limits<double>::quiet_NaN();
  // A lower bound on the error of the best approximation with this structure, when one
  // is known (e.g. the optimum of a relaxed problem); relative_error / lower_bound
  // certifies how far from optimal the result is. NaN when unknown.
  double lower_bound = std::numeric_limits<double>::quiet_NaN();
  // "ks hierarchical (balanced)", "monarch projection", "randomized svd", ...
  std::string method;
};

}  // namespace strop
