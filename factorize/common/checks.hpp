#pragma once
// Input checks and measurements shared by every factorization (internal header).
#include <cmath>
#include <limits>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/device_matrix.hpp"
#include "strop/core/error.hpp"
#include "strop/factorize/report.hpp"

namespace strop::detail {

// ShapeError for an empty matrix.
template <class T>
void require_nonempty(const char* name, const HostMatrix<T>& A) {
  require<ShapeError>(A.rows() > 0 && A.cols() > 0, name, ": the matrix is empty (", A.rows(), "x",
                      A.cols(), ")");
}

// NumericalError naming the first NaN/Inf entry; ShapeError for an empty matrix. Returns the
// largest |real part| or |imaginary part|, within a factor 2 of max |a_ij| (the scale that
// UnitScaled needs), from the same pass.
template <class T>
RealOf<T> require_finite_matrix(const char* name, const HostMatrix<T>& A) {
  require_nonempty(name, A);
  using Real = RealOf<T>;
  // Complex entries read as pairs of reals: vectorized, and no hypot per entry.
  const Eigen::Map<const Eigen::Array<Real, Eigen::Dynamic, 1>> parts(
      reinterpret_cast<const Real*>(A.data()), A.size() * (is_complex_v<T> ? 2 : 1));
  const Real largest = parts.abs().template maxCoeff<Eigen::PropagateNaN>();
  if (std::isfinite(largest)) return largest;  // the loop below only names the culprit
  for (Index j = 0; j < A.cols(); ++j)
    for (Index i = 0; i < A.rows(); ++i)
      require<NumericalError>(is_finite(A(i, j)), name, ": entry (", i, ",", j, ") = ", A(i, j),
                              " is not finite");
  return largest;  // not reached
}

// Empty, or each of 0..n-1 once.
inline void require_permutation(const char* name, const char* what, const std::vector<Index>& p,
                                Index n) {
  if (p.empty()) return;
  require<ShapeError>(static_cast<Index>(p.size()) == n, name, ": ", what, " has ", p.size(),
                      " entries, the matrix needs ", n);
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (Index v : p) {
    require<PatternError>(v >= 0 && v < n && !seen[static_cast<std::size_t>(v)], name, ": ", what,
                          " is not a permutation of 0..", n - 1, " (entry ", v, ")");
    seen[static_cast<std::size_t>(v)] = true;
  }
}

// DeviceError when Device::cuda cannot be honoured, before any work starts.
inline void require_device(const char* name, Device device) {
  if (device == Device::cpu) return;
  require<DeviceError>(cuda_available(), name,
                       ": Device::cuda requested, but no CUDA device is visible or strop was "
                       "built without CUDA");
}

// ||A - op||_F / ||A||_F with op evaluated densely. stableNorm: the squares of entries as
// large as 1e160 (1e19 in float) would overflow, of entries as small as 1e-170 underflow.
// For A = 0 the error is 0 if op is 0 too, else infinite (no relative accuracy at all).
template <class T, class E>
double relative_error(const HostMatrix<T>& A, const E& op) {
  const double norm = double(A.stableNorm());
  const double difference = double((A - op.to_dense()).stableNorm());
  if (norm == 0) return difference == 0 ? 0 : std::numeric_limits<double>::infinity();
  return difference / norm;
}

}  // namespace strop::detail
