// DistributedKron on host parts (the GPU parts are in tests/gpu): the plan of local steps,
// the rotation between them, and the result against the dense Kronecker product.
#include <algorithm>
#include <limits>
#include <vector>

#include "distributed_kron_check.hpp"
#include "strop/operators/kron_distributed.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(kron_distributed)

// Square and rectangular factors; parts that hold runs of several factors, of one, and
// chunks whose extents change between steps.
BOOST_AUTO_TEST_CASE_TEMPLATE(parts_agree_with_the_dense_product, T, ScalarTypes) {
  const std::vector<std::pair<Shapes, std::vector<int>>> cases = {
      {{{4, 4}, {4, 4}, {4, 4}}, {1, 2, 4, 8, 16}},
      {{{2, 3}, {3, 2}, {4, 4}, {2, 2}}, {2, 4}},
      {{{3, 3}, {2, 2}, {2, 2}, {2, 2}, {3, 3}}, {2, 3, 4, 6}},
      {{{6, 4}, {4, 6}, {2, 2}}, {2, 4}},
  };
  for (const auto& [shapes, part_counts] : cases) {
    HostMatrix<T> dense;
    const Kron<T> A = random_kron<T>(shapes, &dense);
    for (int parts : part_counts)
      for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint})
        for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
          for (bool packed_parts : {true, false})
            check_parts(A, dense, parts, op, layout, packed_parts, 3, {});
  }
}

// X in one layout and Y in the other: the local steps follow X's, the last exchange writes Y
// through its own strides.
BOOST_AUTO_TEST_CASE(x_and_y_in_different_layouts) {
  HostMatrix<std::complex<float>> dense;
  const Kron<std::complex<float>> A =
      random_kron<std::complex<float>>({{2, 4}, {6, 3}, {4, 2}}, &dense);
  for (Layout x_layout : {Layout::ColMajor, Layout::RowMajor})
    for (bool packed_parts : {true, false})
      for (Op op : {Op::NoTrans, Op::Adjoint})
        check_parts(A, dense, 2, op, x_layout, packed_parts, 4, {},
                    x_layout == Layout::ColMajor ? Layout::RowMajor : Layout::ColMajor);
}

// Factors that are not dense go through their own host paths in each local step.
BOOST_AUTO_TEST_CASE(factors_of_any_kind) {
  const HostMatrix<double> d = random_matrix<double>(4, 4);
  const Kron<double> A({AnyOperator<double>(Permutation<double>::bit_reversal(8)),
                        AnyOperator<double>(hadamard<double>(4)),
                        AnyOperator<double>(Dense<double>(d))});
  for (int parts : {2, 4, 8})
    for (Op op : {Op::NoTrans, Op::Trans})
      check_parts(A, A.to_dense(), parts, op, Layout::ColMajor, true, 5, {});
}

// The longest runs of trailing factors whose chunks fit a part; the extents change after a
// step (rectangular factors), and so does what fits.
BOOST_AUTO_TEST_CASE(steps_are_the_longest_local_runs) {
  std::vector<AnyOperator<float>> eights;
  for (int f = 0; f < 6; ++f)
    eights.emplace_back(Dense<float>(random_matrix<float>(8, 8)));
  const auto firsts = [](const std::vector<KronPartStep>& steps) {
    std::vector<std::size_t> v;
    for (const auto& s : steps)
      v.push_back(s.first);
    return v;
  };
  // 8^6 over 2 parts: 2^17 rows each, so 8^5 fits, then the first factor.
  BOOST_TEST(firsts(DistributedKron<float>(Kron<float>(eights), 2).steps()) ==
                 std::vector<std::size_t>({1, 0}),
             boost::test_tools::per_element());
  // 8^3 over 64 parts: 8 rows each, one factor a step.
  const Kron<float> cube({eights[0], eights[1], eights[2]});
  BOOST_TEST(
      firsts(DistributedKron<float>(cube, 64).steps()) == std::vector<std::size_t>({2, 1, 0}),
      boost::test_tools::per_element());
  // 2x3 ⊗ 3x2 ⊗ 4x4 over 2 parts: 12 rows each. The last two (chunks of 2*4 = 8 rows) do
  // not fit together, so the 4x4 goes alone; then 3x2 and 2x3 together (chunks of 3*2 = 6).
  const Kron<float> mixed({AnyOperator<float>(Dense<float>(random_matrix<float>(2, 3))),
                           AnyOperator<float>(Dense<float>(random_matrix<float>(3, 2))),
                           AnyOperator<float>(Dense<float>(random_matrix<float>(4, 4)))});
  const auto steps = DistributedKron<float>(mixed, 2).steps();
  BOOST_TEST(firsts(steps) == std::vector<std::size_t>({2, 0}), boost::test_tools::per_element());
  BOOST_TEST(steps[1].in == 6);
  BOOST_TEST(steps[1].out == 6);
}

BOOST_AUTO_TEST_CASE(alpha_zero_does_not_read_x) {
  HostMatrix<double> dense;
  const Kron<double> A = random_kron<double>({{2, 2}, {2, 2}}, &dense);
  const DistributedKron<double> split(A, 2);
  HostMatrix<double> x0(2, 3), x1(2, 3), y0 = random_matrix<double>(2, 3),
                                         y1 = random_matrix<double>(2, 3);
  x0.setConstant(std::numeric_limits<double>::quiet_NaN());
  x1 = x0;
  const HostMatrix<double> e0 = 3.0 * y0, e1 = 3.0 * y1;
  const std::vector<ConstView<double>> xv = {view(x0), view(x1)};
  const std::vector<MatrixView<double>> yv = {view(y0), view(y1)};
  split.apply(Op::NoTrans, xv, yv, {}, 0.0, 3.0);
  BOOST_TEST(relative_error(y0, e0) == 0.0);
  BOOST_TEST(relative_error(y1, e1) == 0.0);
}

BOOST_AUTO_TEST_CASE(bad_splits_and_parts_are_refused) {
  HostMatrix<double> dense;
  const Kron<double> A = random_kron<double>({{3, 3}, {4, 4}}, &dense);  // 12 x 12
  check_error_mentions<ShapeError>([&] { DistributedKron<double>(A, 0); }, "at least one part");
  check_error_mentions<ShapeError>([&] { DistributedKron<double>(A, 5); }, "5 equal row blocks");
  check_error_mentions<ShapeError>([&] { DistributedKron<double>(A, 96); }, "at most 64 parts");
  // 4 parts of 3 rows: the trailing 4x4 factor's chunks do not fit.
  check_error_mentions<ShapeError>([&] { (void)DistributedKron<double>(A, 4).steps(); },
                                   "factor 1");
  const Kron<double> A2 = random_kron<double>({{2, 2}, {2, 2}, {3, 3}}, &dense);  // 12 x 12
  const DistributedKron<double> split(A2, 2);
  HostMatrix<double> x0 = random_matrix<double>(6, 2), x1 = random_matrix<double>(6, 2);
  HostMatrix<double> y0(6, 2), y1(6, 2), short_y(5, 2), wide_x(6, 3);
  const std::vector<ConstView<double>> xv = {view(x0), view(x1)};
  const std::vector<MatrixView<double>> yv = {view(y0), view(y1)};
  check_error_mentions<ShapeError>(
      [&] { split.apply(Op::NoTrans, std::span(xv).first(1), yv, {}); }, "2 parts");
  check_error_mentions<ShapeError>(
      [&] {
        split.apply(Op::NoTrans, xv, std::vector<MatrixView<double>>{view(y0), view(short_y)}, {});
      },
      "part 1");
  check_error_mentions<ShapeError>(
      [&] {
        split.apply(Op::NoTrans, std::vector<ConstView<double>>{view(x0), view(wide_x)}, yv, {});
      },
      "same 2 signals");
  // Y of part 1 is X of part 0.
  check_error_mentions<ShapeError>(
      [&] {
        split.apply(Op::NoTrans, xv, std::vector<MatrixView<double>>{view(y0), view(x0)}, {});
      },
      "overlaps X of part 0");
  check_error_mentions<ShapeError>(
      [&] {
        split.apply(Op::NoTrans, xv, std::vector<MatrixView<double>>{view(y0), view(y0)}, {});
      },
      "Y overlaps Y of part 1");
  Context ctx;
  const std::vector<Context*> one = {&ctx}, with_null = {&ctx, nullptr};
  check_error_mentions<ShapeError>([&] { split.apply(Op::NoTrans, xv, yv, one); },
                                   "host parts take none or one context each");
  check_error_mentions<ShapeError>([&] { split.apply(Op::NoTrans, xv, yv, with_null); },
                                   "part 1: a null context");
  check_error_mentions<NumericalError>(
      [&] { split.apply(Op::NoTrans, xv, yv, {}, std::numeric_limits<double>::quiet_NaN()); },
      "finite");
}

BOOST_AUTO_TEST_SUITE_END()
