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

// The usual tolerance for the size (50 eps sqrt(n)): the nested graphs' largest error was 0.06
// of it (float, seeds below); a wrong index, term or transpose is off by O(1).
template <class T>
double expression_tolerance(const RandomExpression<T>& e) {
  return tolerance<T>(std::max(e.dense.rows(), e.dense.cols()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_expressions)

BOOST_AUTO_TEST_CASE_TEMPLATE(apply_densify_and_simplify_match_the_composed_matrix, T,
                              ScalarTypes) {
  ExpressionGenerator<T> generate(random_expression_seed(20261205));
  for (int i = 0, n = random_expression_count(40); i < n; ++i) {
    const auto e = generate(generate.pick(1, 24), generate.pick(1, 24), 3);
    BOOST_TEST_CONTEXT("expression " << i << ": " << e.text) {
      const double tol = expression_tolerance(e);
      check_against_dense(e.op, e.dense, tol);
      BOOST_TEST(relative_error(e.op.to_dense(), e.dense) <= tol);
      const AnyOperator<T> simpler = simplify(e.op);
      check_against_dense(simpler, e.dense, tol);
    }
  }
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
