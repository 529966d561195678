// Random expression graphs against the dense matrices composed from their leaves: applied in
// every op, layout and (alpha, beta), densified, simplified, and saved to HDF5 and loaded back.
// Fixed seeds, so a failure names an expression that can be rebuilt.
#include <unistd.h>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "random_expression.hpp"
#include "reference.hpp"
#include "strop/io/hdf5.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// Y = alpha op(A) X + beta Y0 on host views of the given layouts.
template <class T>
HostMatrix<T> apply_on_host(const AnyOperator<T>& A, Op op, Layout lx, Layout ly,
                            const HostMatrix<T>& x, const HostMatrix<T>& y0, T alpha, T beta) {
  using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const RowMajorMatrix xr = x;
  RowMajorMatrix yr = y0;
  HostMatrix<T> y = y0;
  const ConstView<T> X = lx == Layout::RowMajor ? ConstView<T>(view(xr)) : view(x);
  const MatrixView<T> Y = ly == Layout::RowMajor ? view(yr) : view(y);
  A.apply(op, X, Y, alpha, beta);
  return ly == Layout::RowMajor ? HostMatrix<T>(yr) : y;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_expressions)

namespace {

// Applied on the host, densified and simplified.
template <class T>
void check_on_host(const RandomExpression<T>& e, Index batch) {
  check_expression(e, batch, [&](Op op, Layout lx, Layout ly, auto&&... rest) {
    return apply_on_host(e.op, op, lx, ly, rest...);
  });
  BOOST_TEST(relative_error(e.op.to_dense(), e.dense) <=
                 tolerance<T>(std::max(e.dense.rows(), e.dense.cols())),
             e.text);
  const RandomExpression<T> simpler{simplify(e.op), e.dense, "simplify(" + e.text + ")"};
  check_expression(simpler, batch, [&](Op op, Layout lx, Layout ly, auto&&... rest) {
    return apply_on_host(simpler.op, op, lx, ly, rest...);
  });
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(apply_densify_and_simplify_match_the_composed_matrix, T,
                              ScalarTypes) {
  for_random_expressions<T>(20261205, 40, 1, 24, 3, 9, check_on_host<T>);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(larger_graphs_match_the_composed_matrix, T, ScalarTypes) {
  for_random_expressions<T>(31, 12, 24, 160, 2, 40, check_on_host<T>);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hdf5_round_trips_are_exact, T, ScalarTypes) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("strop-random-expressions-" + std::to_string(::getpid()) + ".h5");
  ExpressionGenerator<T> generate(random_expression_seed(7));
  for (int i = 0, n = random_expression_count(20); i < n; ++i) {
    const auto e = generate(generate.pick(1, 16), generate.pick(1, 16), 3);
    BOOST_TEST_CONTEXT("expression " << i << ": " << e.text) {
      const std::string name = "e" + std::to_string(i);
      io::save(file.string(), e.op, name);
      const AnyOperator<T> loaded = io::load<T>(file.string(), name);
      BOOST_TEST(loaded.rows() == e.op.rows());
      BOOST_TEST(loaded.cols() == e.op.cols());
      BOOST_TEST(loaded.parameter_count() == e.op.parameter_count());
      BOOST_TEST((loaded.to_dense().array() == e.op.to_dense().array()).all());
    }
  }
  std::filesystem::remove(file);
}

BOOST_AUTO_TEST_SUITE_END()
