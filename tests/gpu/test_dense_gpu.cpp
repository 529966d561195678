// GPU plumbing end to end: Dense through cuBLAS and expressions of it evaluated on the
// device, against the CPU reference. Every test is skipped when no CUDA device is visible.
#include "gpu_reference.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(gpu_dense, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE(device_is_named) {
  BOOST_TEST_MESSAGE("device: " << device_name(0));
  BOOST_TEST(std::string(device_name(0)) != "none");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(host_device_round_trip, T, ScalarTypes) {
  const HostMatrix<T> m = random_matrix<T>(37, 5);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    BOOST_TEST(relative_error(to_device(m, layout).to_host(), m) == 0.0);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dense_cublas_matches_cpu, T, ScalarTypes) {
  for (auto [m, n, b] :
       {std::tuple<Index, Index, Index>{1, 1, 1}, {33, 17, 5}, {64, 128, 300}, {7, 300, 1}}) {
    check_gpu_against_cpu(Dense<T>(random_matrix<T>(m, n)), b);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(expressions_on_the_device, T, ScalarTypes) {
  const Dense<T> A(random_matrix<T>(24, 16)), B(random_matrix<T>(16, 24)),
      C(random_matrix<T>(24, 24));
  const T s = random_scalar<T>();
  check_gpu_against_cpu(s * (A * B) + C.transpose() - Identity<T>(24), 9);
  // (C^T)^H = conj(C): runs the device conjugation kernel.
  check_gpu_against_cpu(C.transpose().adjoint() * A, 4);
  check_gpu_against_cpu(AnyOperator<T>(A * B - C), 3);
  check_gpu_against_cpu(block_diag(A, B), 5);
  check_gpu_against_cpu(vstack(A, C * A), 5);
}

BOOST_AUTO_TEST_CASE(operator_star_on_device_matrices) {
  const Dense<float> A(random_matrix<float>(32, 8));
  const HostMatrix<float> x = random_matrix<float>(8, 6);
  const DeviceMatrix<float> yd = A * to_device(x, Layout::RowMajor);
  BOOST_TEST((yd.layout() == Layout::RowMajor));
  BOOST_TEST(relative_error(yd.to_host(), HostMatrix<float>(A.matrix() * x)) <=
             tolerance<float>(8));
}

BOOST_AUTO_TEST_CASE(out_of_memory_is_a_device_error) {
  // 2^40 doubles = 8 TiB: more than any GPU has.
  BOOST_CHECK_THROW(DeviceMatrix<double>(Index(1) << 20, Index(1) << 20), DeviceError);
  // The context still works afterwards.
  BOOST_TEST(to_device(HostMatrix<double>(HostMatrix<double>::Ones(2, 2))).to_host().sum() == 4);
}

// The diagonal's row-scaling kernel (d conjugated for A^H), every layout pair and alpha/beta,
// and inside an expression and a Kronecker product (the any-factor path).
BOOST_AUTO_TEST_CASE_TEMPLATE(diagonal_on_the_device, T, ScalarTypes) {
  const Diagonal<T> D(typename Diagonal<T>::Vector(random_matrix<T>(24, 1)));
  check_gpu_against_cpu(D, 9);
  const Dense<T> A(random_matrix<T>(24, 24));
  check_gpu_against_cpu(A * D + D.adjoint(), 5);
  check_gpu_against_cpu(kron(Diagonal<T>(typename Diagonal<T>::Vector(random_matrix<T>(3, 1))), A),
                        4);
}

BOOST_AUTO_TEST_SUITE_END()
