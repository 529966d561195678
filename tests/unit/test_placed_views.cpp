// Every node of the operator zoo applied on the host to X and Y that are blocks of larger
// matrices (offsets, leading dimensions above the extents, both storage orders), against its
// dense matrix; the elements of Y's matrix outside the block must keep their values. The GPU
// counterpart is tests/gpu/test_views_gpu.cpp.
#include <boost/test/unit_test.hpp>

#include "operator_zoo.hpp"
#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A rows x cols block at (row, col) of a matrix with `after` more rows and columns.
struct Placement {
  Index row, col, rows_after, cols_after;
};

// Applies `A` (dense matrix `dense`) to the block of a column-major or row-major X and Y.
template <class T, class XMatrix, class YMatrix>
void check_placed(const AnyOperator<T>& A, const HostMatrix<T>& dense, Op op, Index batch,
                  const Placement& px, const Placement& py) {
  const HostMatrix<T> d = op_of(dense, op);
  const XMatrix x =
      random_matrix<T>(px.row + d.cols() + px.rows_after, px.col + batch + px.cols_after);
  const YMatrix y0 =
      random_matrix<T>(py.row + d.rows() + py.rows_after, py.col + batch + py.cols_after);
  const T alpha = random_scalar<T>(), beta = random_scalar<T>();
  YMatrix y = y0;
  A.apply(op, view(x).row_block(px.row, d.cols()).col_block(px.col, batch),
          view(y).row_block(py.row, d.rows()).col_block(py.col, batch), alpha, beta);

  YMatrix expected = y0;
  expected.block(py.row, py.col, d.rows(), batch) =
      alpha * (d * HostMatrix<T>(x.block(px.row, px.col, d.cols(), batch))) +
      beta * HostMatrix<T>(y0.block(py.row, py.col, d.rows(), batch));
  YMatrix outside = y - expected;
  outside.block(py.row, py.col, d.rows(), batch).setZero();
  BOOST_TEST_CONTEXT(to_string(op) << " X at (" << px.row << ", " << px.col << ") Y at (" << py.row
                                   << ", " << py.col << "), batch " << batch) {
    BOOST_TEST(outside.isZero(0));  // exactly: nothing outside the block is written
    BOOST_TEST(relative_error(HostMatrix<T>(y), HostMatrix<T>(expected)) <=
               tolerance<T>(4 * std::max(dense.rows(), dense.cols())));
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(placed_views)

BOOST_AUTO_TEST_CASE_TEMPLATE(every_node_on_blocks_of_larger_matrices, T, ScalarTypes) {
  std::mt19937 gen(11);
  for (const auto& [name, A] : operator_zoo<T>(gen)) {
    const HostMatrix<T> dense = A.to_dense();
    BOOST_TEST_CONTEXT(name) {
      for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
        const Index batch = random_index(1, 6);
        const Placement px{random_index(0, 3), random_index(0, 2), random_index(0, 2),
                           random_index(0, 2)};
        const Placement py{random_index(0, 3), random_index(0, 2), random_index(0, 2),
                           random_index(0, 2)};
        check_placed<T, HostMatrix<T>, HostMatrix<T>>(A, dense, op, batch, px, py);
        check_placed<T, RowMajorMatrix<T>, HostMatrix<T>>(A, dense, op, batch, px, py);
        check_placed<T, HostMatrix<T>, RowMajorMatrix<T>>(A, dense, op, batch, px, py);
        check_placed<T, RowMajorMatrix<T>, RowMajorMatrix<T>>(A, dense, op, batch, px, py);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
