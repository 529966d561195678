#include "reference_svd.hpp"

#include <Eigen/SVD>

namespace strop::testing {

Eigen::VectorXd reference_singular_values(const HostMatrix<double>& block) {
  return Eigen::BDCSVD<HostMatrix<double>>(block).singularValues();
}

// JacobiSVD: Eigen 3.4's BDCSVD is wrong for some complex blocks (block_svd.cpp says which).
Eigen::VectorXd reference_singular_values(const HostMatrix<std::complex<double>>& block) {
  return Eigen::JacobiSVD<HostMatrix<std::complex<double>>>(block).singularValues();
}

}  // namespace strop::testing
