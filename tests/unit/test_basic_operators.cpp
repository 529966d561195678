// Dense, Identity, Diagonal and Permutation against their dense matrices.
#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(basic_operators)

BOOST_AUTO_TEST_CASE_TEMPLATE(dense_matches_its_matrix, T, ScalarTypes) {
  for (auto [m, n] : {std::pair<Index, Index>{1, 1}, {5, 3}, {3, 7}, {16, 16}}) {
    const HostMatrix<T> a = random_matrix<T>(m, n);
    check_against_dense(Dense<T>(a), a);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(identity_is_the_identity, T, ScalarTypes) {
  check_against_dense(Identity<T>(6), HostMatrix<T>(HostMatrix<T>::Identity(6, 6)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(diagonal_matches_its_matrix, T, ScalarTypes) {
  const HostMatrix<T> d = random_matrix<T>(7, 1);
  HostMatrix<T> dense = HostMatrix<T>::Zero(7, 7);
  for (Index i = 0; i < 7; ++i)
    dense(i, i) = d(i, 0);
  check_against_dense(Diagonal<T>(d.col(0)), dense);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(permutation_gathers_rows, T, ScalarTypes) {
  const std::vector<Index> perm = {3, 0, 4, 1, 2};
  HostMatrix<T> dense = HostMatrix<T>::Zero(5, 5);
  for (Index i = 0; i < 5; ++i)
    dense(i, perm[i]) = T(1);
  check_against_dense(Permutation<T>(perm), dense);
}

BOOST_AUTO_TEST_CASE(bit_reversal_of_8) {
  const auto p = Permutation<double>::bit_reversal(8);
  const std::vector<Index> expected = {0, 4, 2, 6, 1, 5, 3, 7};
  BOOST_TEST(p.indices() == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(to_dense_and_costs) {
  const HostMatrix<double> a = random_matrix<double>(4, 6);
  const Dense<double> A(a);
  BOOST_TEST(relative_error(A.to_dense(), a) == 0.0);
  BOOST_TEST(A.flops(10) == 2.0 * 4 * 6 * 10);
  BOOST_TEST(A.parameter_count() == 24);
  BOOST_TEST(Dense<std::complex<float>>(random_matrix<std::complex<float>>(2, 3)).flops(1) ==
             8.0 * 6);
}

BOOST_AUTO_TEST_SUITE_END()
