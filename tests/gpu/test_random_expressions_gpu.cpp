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

namespace {

// Applied on the device, X and Y in every pair of layouts.
template <class T>
void check_on_device(const RandomExpression<T>& e, Index batch) {
  check_expression(e, batch,
                   [&](Op op, Layout lx, Layout ly, const HostMatrix<T>& x, const HostMatrix<T>& y0,
                       T alpha, T beta) {
                     const DeviceMatrix<T> xd = to_device(x, lx);
                     DeviceMatrix<T> yd = to_device(y0, ly);
                     e.op.apply(op, xd.view(), yd.view(), alpha, beta);
                     return yd.to_host();
                   });
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(device_application_matches_the_composed_matrix, T, ScalarTypes) {
  for_random_expressions<T>(20261205, 40, 1, 24, 3, 9, check_on_device<T>);
}

// Larger leaves and batches, where the kernels' choices (tiles, fused chains, GEMM paths)
// differ from the small graphs'.
BOOST_AUTO_TEST_CASE_TEMPLATE(larger_graphs_match_the_composed_matrix, T, ScalarTypes) {
  for_random_expressions<T>(31, 12, 24, 160, 2, 300, check_on_device<T>);
}

BOOST_AUTO_TEST_SUITE_END()
