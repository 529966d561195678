#pragma once
// Singular values by Eigen's SVD in double precision: the tests' independent reference for
// our SVDs. Compiled once (reference_svd.cpp, linked into both test programs): each of Eigen's
// SVDs costs the 2-core CI build about half a minute per scalar type and file.
#include <Eigen/Core>
#include <complex>
#include <type_traits>

#include "strop/strop.hpp"

namespace strop::testing {

// Descending singular values of `block` (Eigen's BDCSVD for real blocks, JacobiSVD for complex).
Eigen::VectorXd reference_singular_values(const HostMatrix<double>& block);
Eigen::VectorXd reference_singular_values(const HostMatrix<std::complex<double>>& block);

// The same for any scalar type, computed in double precision: Eigen's single-precision SVD
// is less accurate than ours (3.00006 for the singular values 3 of a scaled unitary block).
template <class Derived>
Eigen::VectorXd reference_singular_values_of(const Eigen::MatrixBase<Derived>& block) {
  using T = typename Derived::Scalar;
  using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
  return reference_singular_values(HostMatrix<Wide>(block.template cast<Wide>()));
}

}  // namespace strop::testing
