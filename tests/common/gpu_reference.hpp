#pragma once
// GPU test helpers: the device precondition and the check of a device application
// against the (independently tested) CPU application of the same operator.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "reference.hpp"

// GCC 12/13 see boost::function's buffer copy inside precondition() as uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace strop::testing {
namespace utf = boost::unit_test;

struct HasDevice {
  boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
    boost::test_tools::assertion_result result(cuda_available());
    result.message() << "no CUDA device visible";
    return result;
  }
};

struct HasTwoDevices {
  boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
    boost::test_tools::assertion_result result(device_count() >= 2);
    result.message() << "needs two CUDA devices, " << device_count() << " visible";
    return result;
  }
};

// Shared memory per block of devices smaller than an H100 (227 KB): an A100 (sm_80, 163 KB)
// and sm_86/89 GPUs (99 KB), emulated on the test's device with
// detail::SharedMemoryCapForTesting (runtime/cuda_check.hpp).
inline constexpr std::size_t kSmallerSharedMemory[] = {163 * 1024, 99 * 1024};

// BOOST_TEST(error <= tol), and where STROP_ERROR_LOG names a file, a line "test case, error,
// tolerance" appended to it: the measured errors that the GPU tests' tolerances are set from.
inline void check_error_within(double error, double tol) {
  BOOST_TEST(error <= tol);
  static const char* const log = std::getenv("STROP_ERROR_LOG");
  if (log == nullptr) return;
  std::ofstream(log, std::ios::app)
      << utf::framework::current_test_case().full_name() << '\t' << error << '\t' << tol << '\n';
}

// Applies `A` on the device in all layouts (X and Y chosen independently) and forms,
// comparing with the CPU application of the same expression.
template <class E, class T = typename E::Scalar>
inline void check_gpu_against_cpu(const E& A, Index batch, double tol = -1) {
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
          // Relative to the larger of the result and the beta term: where alpha A x and
          // beta y0 nearly cancel (a 1 x 1 factor, say), the roundings of the terms remain.
          const double scale = std::max<double>(expected.norm(), (beta * y0).norm());
          check_error_within(double((got - expected).norm()) / scale,
                             tol > 0 ? tol : tolerance<T>(in));
        }
      }
    }
  }
}

// The relative error of apply_reduced_precision(A, op, X, Y, alpha, beta) on 16-bit device
// signals (X in layout lx, Y in ly) against the float CPU application to the same values.
template <class S, class Operator>
double reduced_precision_error(const Operator& A, Op op, const HostMatrix<S>& xs,
                               const HostMatrix<S>& y0s, Layout lx, Layout ly, float alpha = 0.5f,
                               float beta = -2.0f) {
  HostMatrix<float> expected = y0s.template cast<float>();
  A.apply(op, view(HostMatrix<float>(xs.template cast<float>())), view(expected), alpha, beta);
  const DeviceMatrix<S> xd = to_device(xs, lx);
  DeviceMatrix<S> yd = to_device(y0s, ly);
  apply_reduced_precision<S>(A, op, xd.view(), yd.view(), alpha, beta);
  return relative_error(HostMatrix<float>(yd.to_host().template cast<float>()), expected);
}

// The tuning cache's keys that start with `prefix`: each engine's keys start with its name
// ("ks|", "kron|"), and the GEMMs an engine's candidates run add "gemm|" keys of their own.
inline std::vector<std::string> tuned_keys(const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& entry : tuned_choices())
    if (entry.first.rfind(prefix, 0) == 0) keys.push_back(entry.first);
  return keys;
}

}  // namespace strop::testing
