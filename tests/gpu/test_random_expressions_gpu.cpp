// Random expression graphs (tests/common/random_expression.hpp) applied on the device, in
// every op and every pair of X and Y layouts with random alpha and beta, against the dense
// matrices composed from their leaves. The same graphs pass on the CPU (unit suite
// random_expressions); here every node's and leaf's device path is exercised in combination:
// Kronecker factors that are products or stacks, transposed block diagonals, ...
#include <boost/test/unit_test.hpp>

#include "gpu_reference.hpp"
#include "random_expression.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(gpu_random_expressions, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(device_application_matches_the_composed_matrix, T, ScalarTypes) {
  ExpressionGenerator<T> generate(random_expression_seed(20261205));
  for (int i = 0, n = random_expression_count(40); i < n; ++i) {
    const auto e = generate(generate.pick(1, 24), generate.pick(1, 24), 3);
    const Index batch = generate.pick(1, 9);
    for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
      const HostMatrix<T> d = op_of(e.dense, op);
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor}) {
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          // alpha = 1, beta = 0 with Y poisoned with NaN (Y must not be read), or random.
          const bool plain = generate.pick(0, 1) == 0;
          const T alpha = plain ? T(1) : random_scalar<T>();
          const T beta = plain ? T(0) : random_scalar<T>();
          const HostMatrix<T> x = random_matrix<T>(d.cols(), batch);
          HostMatrix<T> y0 = random_matrix<T>(d.rows(), batch);
          if (plain) y0.setConstant(T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
          const HostMatrix<T> expected =
              plain ? HostMatrix<T>(d * x) : HostMatrix<T>(alpha * (d * x) + beta * y0);
          const DeviceMatrix<T> xd = to_device(x, lx);
          DeviceMatrix<T> yd = to_device(y0, ly);
          e.op.apply(op, xd.view(), yd.view(), alpha, beta);
          const HostMatrix<T> got = yd.to_host();
          BOOST_TEST_CONTEXT("expression " << i << ": " << e.text << ", " << to_string(op) << " X "
                                           << to_string(lx) << " Y " << to_string(ly)
                                           << " B=" << batch << (plain ? " plain" : "")) {
            BOOST_TEST(got.allFinite());
            // Relative to the larger of the result and the beta term (they may cancel).
            const double scale =
                std::max<double>(expected.norm(), plain ? 0.0 : double((beta * y0).norm()));
            BOOST_TEST(double((got - expected).norm()) / scale <=
                       tolerance<T>(std::max(d.rows(), d.cols())));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
