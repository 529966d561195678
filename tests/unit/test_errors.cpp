// Bad input gets the right typed error, with a message that names the values.
#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(shape_mismatches) {
  const Dense<double> A(random_matrix<double>(3, 4)), B(random_matrix<double>(5, 2));
  BOOST_CHECK_THROW(A * B, ShapeError);
  BOOST_CHECK_THROW(A + B, ShapeError);
  BOOST_CHECK_THROW(vstack(A, B), ShapeError);
  BOOST_CHECK_THROW(hstack(A, B), ShapeError);
  HostMatrix<double> x = random_matrix<double>(5, 2), y(3, 2);
  BOOST_CHECK_THROW(apply(A, view(x), view(y)), ShapeError);
  HostMatrix<double> x4 = random_matrix<double>(4, 2), y_wrong(3, 3);
  BOOST_CHECK_THROW(apply(A, view(x4), view(y_wrong)), ShapeError);
  try {
    apply(A, view(x), view(y));
  } catch (const ShapeError& e) {
    BOOST_TEST(std::string(e.what()).find("needs X with 4 rows, got 5x2") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(aliasing_output) {
  const Dense<double> A(random_matrix<double>(4, 4));
  HostMatrix<double> x = random_matrix<double>(4, 2);
  BOOST_CHECK_THROW(apply(A, view(x), view(x)), ShapeError);
}

BOOST_AUTO_TEST_CASE(non_finite_values) {
  HostMatrix<double> a = random_matrix<double>(2, 2);
  a(1, 0) = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(Dense<double>{a}, NumericalError);
  const Dense<double> A(random_matrix<double>(2, 2));
  BOOST_CHECK_THROW(std::numeric_limits<double>::infinity() * A, NumericalError);
  HostMatrix<double> x = random_matrix<double>(2, 1), y(2, 1);
  BOOST_CHECK_THROW(apply(A, view(x), view(y), std::numeric_limits<double>::quiet_NaN()),
                    NumericalError);
  Eigen::VectorXd d = Eigen::VectorXd::Ones(3);
  d(2) = std::numeric_limits<double>::infinity();
  BOOST_CHECK_THROW(Diagonal<double>{d}, NumericalError);
}

BOOST_AUTO_TEST_CASE(invalid_permutations) {
  BOOST_CHECK_THROW(Permutation<double>(std::vector<Index>{0, 0, 1}), PatternError);
  BOOST_CHECK_THROW(Permutation<double>(std::vector<Index>{0, 3, 1}), PatternError);
  BOOST_CHECK_THROW(Permutation<double>::bit_reversal(6), ShapeError);
}

BOOST_AUTO_TEST_CASE(device_without_gpu) {
  if (cuda_available()) return;  // covered by the GPU tests on a GPU machine
  BOOST_CHECK_THROW(DeviceMatrix<float>(4, 4), DeviceError);
  BOOST_CHECK_THROW(to_device(HostMatrix<float>(HostMatrix<float>::Ones(2, 2))), DeviceError);
  BOOST_TEST(std::string(device_name(0)) == "none");
}

BOOST_AUTO_TEST_CASE(host_only_leaves_refuse_device_views) {
  // A view claiming device memory must never be read on the host. (With a device, a host
  // pointer dressed as a device view reaches the GPU path, which cannot tell.)
  if (cuda_available()) return;
  const Diagonal<float> D(Eigen::VectorXf::Ones(2));
  std::vector<float> storage(4);
  auto x = make_view<const float>(storage.data(), 2, 1, Layout::ColMajor, MemorySpace::Device);
  auto y = make_view(storage.data() + 2, 2, 1, Layout::ColMajor, MemorySpace::Device);
  BOOST_CHECK_THROW(D.apply(Op::NoTrans, x, y), DeviceError);
}

BOOST_AUTO_TEST_SUITE_END()
