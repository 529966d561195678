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
    check_expression(e, generate.pick(1, 9),
                     [&](Op op, Layout lx, Layout ly, const HostMatrix<T>& x,
                         const HostMatrix<T>& y0, T alpha, T beta) {
                       const DeviceMatrix<T> xd = to_device(x, lx);
                       DeviceMatrix<T> yd = to_device(y0, ly);
                       e.op.apply(op, xd.view(), yd.view(), alpha, beta);
                       return yd.to_host();
                     });
  }
}

BOOST_AUTO_TEST_SUITE_END()
