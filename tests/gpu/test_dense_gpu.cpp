// GPU plumbing end to end: Dense through cuBLAS and expressions of it evaluated on the
// device, against the CPU reference. Every test is skipped when no CUDA device is visible.
#include "reference.hpp"

// GCC 12/13 see boost::function's buffer copy inside precondition() as uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

using namespace strop;
using namespace strop::testing;
namespace utf = boost::unit_test;

namespace {
struct HasDevice {
  boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
    boost::test_tools::assertion_result result(cuda_available());
    result.message() << "no CUDA device visible";
    return result;
  }
};

// Applies `A` on the device in all layouts (X and Y chosen independently) and forms,
// comparing with the CPU application of the same expression.
template <class E, class T = typename E::Scalar>
void check_gpu_against_cpu(const E& A, Index batch) {
  for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
    const Index in = op == Op::NoTrans ? A.cols() : A.rows();
    const Index out = op == Op::NoTrans ? A.rows() : A.cols();
    for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
      for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
        const T alpha = random_scalar<T>(), beta = random_scalar<T>();
        const HostMatrix<T> x = random_matrix<T>(in, batch);
        const HostMatrix<T> y0 = random_matrix<T>(out, batch);
        HostMatrix<T> expected = y0;
        A.apply(op, view(x), view(expected), alpha, beta);

        const DeviceMatrix<T> xd = to_device(x, lx);
        DeviceMatrix<T> yd = to_device(y0, ly);
        A.apply(op, xd.view(), yd.view(), alpha, beta);
        const HostMatrix<T> got = yd.to_host();
        BOOST_TEST_CONTEXT(to_string(op) << " X " << to_string(lx) << " Y " << to_string(ly) << " "
                                         << ScalarTraits<T>::name) {
          BOOST_TEST(relative_error(got, expected) <= tolerance<T>(in));
        }
      }
    }
  }
}
}  // namespace

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
  check_gpu_against_cpu(vstack(A, C), 5);
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

BOOST_AUTO_TEST_CASE(host_only_leaf_on_device_says_so) {
  const Diagonal<float> D(Eigen::VectorXf::Ones(4));
  const DeviceMatrix<float> x = to_device(HostMatrix<float>(HostMatrix<float>::Ones(4, 2)));
  DeviceMatrix<float> y(4, 2);
  BOOST_CHECK_THROW(D.apply(Op::NoTrans, x.view(), y.view()), DeviceError);
}

BOOST_AUTO_TEST_SUITE_END()
