#include "reference_svd.hpp"

#include <Eigen/SVD>

namespace strop::testing {

Eigen::VectorXd reference_singular_values(const HostMatrix<double>& block) {
  return Eigen::BDCSVD<HostMatrix<double>>(block).singularValues();
}

Eigen::VectorXd reference_singular_values(const HostMatrix<std::complex<double>>& block) {
  return Eigen::BDCSVD<HostMatrix<std::complex<double>>>(block).singularValues();
}

}  // namespace strop::testing
