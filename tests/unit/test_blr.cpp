// Block low-rank leaves (LowRank, Monarch, Blast) against dense matrices assembled block by
// block from the raw parameter arrays with plain Eigen.
#include <limits>
#include <vector>

#include "operators/blr/blr_ks_form.hpp"
#include "reference.hpp"

namespace {

using namespace strop;
using namespace strop::testing;

template <class T>
using Map = Eigen::Map<const HostMatrix<T>>;

template <class T>
std::vector<T> random_values(Index count) {
  std::vector<T> values(static_cast<std::size_t>(count));
  for (T& v : values)
    v = random_scalar<T>();
  return values;
}

// The raw arrays of a Monarch / Blast and its shape, as a test case describes them.
struct Grid {
  Index rows, cols, row_blocks, col_blocks, rank;
  Index p() const { return rows / row_blocks; }
  Index q() const { return cols / col_blocks; }
};

const std::vector<Grid> grids = {
    {12, 12, 3, 3, 2},  // square
    {12, 12, 4, 2, 3},  // square matrix, rectangular grid
    {12, 10, 3, 5, 1},  // rectangular, rank 1
    {6, 15, 2, 3, 4},   // wide, rank above the block size
    {14, 6, 7, 3, 2},   // tall
    {9, 8, 1, 1, 3},    // one block: plain low rank
    {8, 9, 1, 3, 2},    // one block-row
    {10, 6, 5, 1, 1},   // one block-column
    {4, 4, 4, 4, 1},    // 1x1 blocks
};

// Block (k, l) = L_{k,l} R_{k,l}, the L and R blocks stored [k][l], each column-major.
template <class T>
HostMatrix<T> monarch_dense(const Grid& g, const std::vector<T>& left,
                            const std::vector<T>& right) {
  HostMatrix<T> dense(g.rows, g.cols);
  for (Index k = 0; k < g.row_blocks; ++k) {
    for (Index l = 0; l < g.col_blocks; ++l) {
      const Index block = k * g.col_blocks + l;
      const Map<T> L(left.data() + block * g.p() * g.rank, g.p(), g.rank);
      const Map<T> R(right.data() + block * g.rank * g.q(), g.rank, g.q());
      dense.block(k * g.p(), l * g.q(), g.p(), g.q()) = L * R;
    }
  }
  return dense;
}

// Block (k, l) = U_k diag(s_{k,l}) V_l.
template <class T>
HostMatrix<T> blast_dense(const Grid& g, const std::vector<T>& left, const std::vector<T>& diag,
                          const std::vector<T>& right) {
  using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  HostMatrix<T> dense(g.rows, g.cols);
  for (Index k = 0; k < g.row_blocks; ++k) {
    for (Index l = 0; l < g.col_blocks; ++l) {
      const Map<T> U(left.data() + k * g.p() * g.rank, g.p(), g.rank);
      const Map<T> V(right.data() + l * g.rank * g.q(), g.rank, g.q());
      const Eigen::Map<const Vector> s(diag.data() + (k * g.col_blocks + l) * g.rank, g.rank);
      dense.block(k * g.p(), l * g.q(), g.p(), g.q()) = U * s.asDiagonal() * V;
    }
  }
  return dense;
}

template <class T>
Monarch<T> make_monarch(const Grid& g, std::vector<T> left, std::vector<T> right) {
  return Monarch<T>(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, std::move(left),
                    std::move(right));
}

template <class T>
Blast<T> make_blast(const Grid& g, std::vector<T> left, std::vector<T> diag, std::vector<T> right) {
  return Blast<T>(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, std::move(left),
                  std::move(diag), std::move(right));
}

// Every stored scalar is used in one multiply-add per signal.
template <class T>
double expected_flops(Index parameters, Index batch) {
  return (is_complex_v<T> ? 8.0 : 2.0) * double(parameters) * double(batch);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(blr)

BOOST_AUTO_TEST_CASE_TEMPLATE(lowrank_matches_dense, T, ScalarTypes) {
  for (auto [m, n, r] : {std::tuple<Index, Index, Index>{7, 5, 3}, {5, 9, 1}, {16, 16, 20}}) {
    const HostMatrix<T> left = random_matrix<T>(m, r);
    const HostMatrix<T> right = random_matrix<T>(r, n);
    const LowRank<T> A(left, right);
    BOOST_TEST(std::string(LowRank<T>::type_name) == "lowrank");
    BOOST_TEST(A.rank() == r);
    BOOST_TEST(A.parameter_count() == r * (m + n));
    BOOST_TEST(A.flops(3) == expected_flops<T>(r * (m + n), 3));
    HostMatrix<T> dense(m, n);
    for (Index i = 0; i < m; ++i) {
      for (Index j = 0; j < n; ++j) {
        dense(i, j) = T(0);
        for (Index k = 0; k < r; ++k)
          dense(i, j) += left(i, k) * right(k, j);
      }
    }
    check_against_dense(A, dense);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lowrank_rank_zero_is_zero, T, ScalarTypes) {
  const LowRank<T> A(HostMatrix<T>(4, 0), HostMatrix<T>(0, 3));
  check_against_dense(A, HostMatrix<T>(HostMatrix<T>::Zero(4, 3)));
  BOOST_TEST(A.flops(5) == 0.0);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lowrank_random, T, ScalarTypes) {
  std::mt19937 engine(7);
  const auto A = LowRank<T>::random(10, 6, 2, engine);
  BOOST_TEST(A.rows() == 10);
  BOOST_TEST(A.cols() == 6);
  check_against_dense(A, HostMatrix<T>(A.left() * A.right()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_matches_dense, T, ScalarTypes) {
  for (const Grid& g : grids) {
    BOOST_TEST_CONTEXT("monarch " << g.rows << "x" << g.cols << " grid " << g.row_blocks << "x"
                                  << g.col_blocks << " rank " << g.rank) {
      const auto left = random_values<T>(g.row_blocks * g.col_blocks * g.p() * g.rank);
      const auto right = random_values<T>(g.row_blocks * g.col_blocks * g.rank * g.q());
      const Monarch<T> A = make_monarch(g, left, right);
      BOOST_TEST(A.parameter_count() == g.row_blocks * g.col_blocks * g.rank * (g.p() + g.q()));
      BOOST_TEST(A.flops(4) == expected_flops<T>(A.parameter_count(), 4));
      check_against_dense(A, monarch_dense(g, left, right));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_accessors_and_random, T, ScalarTypes) {
  std::mt19937 engine(11);
  const Grid g{12, 10, 3, 5, 2};
  const auto A = Monarch<T>::random(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, engine);
  BOOST_TEST(std::string(Monarch<T>::type_name) == "monarch");
  BOOST_TEST(A.grid().block_height() == 4);
  BOOST_TEST(A.grid().block_width() == 2);
  HostMatrix<T> dense = monarch_dense(g, A.left_values(), A.right_values());
  BOOST_TEST(A.left_block(2, 4).rows() == 4);
  BOOST_TEST(A.right_block(2, 4).cols() == 2);
  const HostMatrix<T> block = A.left_block(1, 3) * A.right_block(1, 3);
  BOOST_TEST(relative_error(block, HostMatrix<T>(dense.block(4, 6, 4, 2))) <= tolerance<T>());
  check_against_dense(A, dense);
  // A random operator roughly keeps the norm of a random signal.
  const HostMatrix<T> x = random_matrix<T>(g.cols, 200);
  const double gain = double((dense * x).norm() / x.norm());
  BOOST_TEST(gain > 0.3);
  BOOST_TEST(gain < 3.0);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blast_matches_dense, T, ScalarTypes) {
  for (const Grid& g : grids) {
    BOOST_TEST_CONTEXT("blast " << g.rows << "x" << g.cols << " grid " << g.row_blocks << "x"
                                << g.col_blocks << " rank " << g.rank) {
      const auto left = random_values<T>(g.rows * g.rank);
      const auto diag = random_values<T>(g.row_blocks * g.col_blocks * g.rank);
      const auto right = random_values<T>(g.rank * g.cols);
      const Blast<T> A = make_blast(g, left, diag, right);
      BOOST_TEST(A.parameter_count() == g.rank * (g.rows + g.cols + g.row_blocks * g.col_blocks));
      BOOST_TEST(A.flops(4) == expected_flops<T>(A.parameter_count(), 4));
      check_against_dense(A, blast_dense(g, left, diag, right));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blast_accessors_and_random, T, ScalarTypes) {
  std::mt19937 engine(13);
  const Grid g{8, 12, 2, 4, 3};
  const auto A = Blast<T>::random(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, engine);
  BOOST_TEST(std::string(Blast<T>::type_name) == "blast");
  const HostMatrix<T> dense =
      blast_dense(g, A.left_values(), A.diagonal_values(), A.right_values());
  const HostMatrix<T> block = A.left_factor(1) * A.diagonal(1, 2).asDiagonal() * A.right_factor(2);
  BOOST_TEST(relative_error(block, HostMatrix<T>(dense.block(4, 6, 4, 3))) <= tolerance<T>());
  check_against_dense(A, dense);
  const HostMatrix<T> x = random_matrix<T>(g.cols, 200);
  const double gain = double((dense * x).norm() / x.norm());
  BOOST_TEST(gain > 0.3);
  BOOST_TEST(gain < 3.0);
}

// The threaded path does not depend on the scalar type, and OpenMP regions are slow on a
// busy machine: one real and one complex type cover it.
using ThreadedTypes = boost::mpl::list<double, std::complex<float>>;

BOOST_AUTO_TEST_CASE_TEMPLATE(sizes_that_use_threads, T, ThreadedTypes) {
  // Large enough (with 16 signals) for the block loops to run in parallel under OpenMP.
  const Grid g{96, 128, 4, 8, 16};
  const auto left = random_values<T>(g.row_blocks * g.col_blocks * g.p() * g.rank);
  const auto right = random_values<T>(g.row_blocks * g.col_blocks * g.rank * g.q());
  check_against_dense(make_monarch(g, left, right), monarch_dense(g, left, right), -1, 16);
  const auto u = random_values<T>(g.rows * g.rank);
  const auto s = random_values<T>(g.row_blocks * g.col_blocks * g.rank);
  const auto v = random_values<T>(g.rank * g.cols);
  check_against_dense(make_blast(g, u, s, v), blast_dense(g, u, s, v), -1, 16);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blast_with_one_block_is_lowrank, T, ScalarTypes) {
  const Grid g{9, 7, 1, 1, 3};
  const auto left = random_values<T>(g.rows * g.rank);
  const auto diag = random_values<T>(g.rank);
  const auto right = random_values<T>(g.rank * g.cols);
  const Blast<T> blast = make_blast(g, left, diag, right);
  using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  const HostMatrix<T> u_s = Map<T>(left.data(), g.rows, g.rank) *
                            Eigen::Map<const Vector>(diag.data(), g.rank).asDiagonal();
  const LowRank<T> lowrank(u_s, Map<T>(right.data(), g.rank, g.cols));
  BOOST_TEST(relative_error(blast.to_dense(), lowrank.to_dense()) <= tolerance<T>());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(zero_rank_is_zero_operator, T, ScalarTypes) {
  const Grid g{6, 4, 3, 2, 0};
  check_against_dense(make_monarch<T>(g, {}, {}), HostMatrix<T>(HostMatrix<T>::Zero(6, 4)));
  check_against_dense(make_blast<T>(g, {}, {}, {}), HostMatrix<T>(HostMatrix<T>::Zero(6, 4)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(in_expressions, T, ScalarTypes) {
  // Leaves inside expression nodes and behind AnyOperator (strided sub-views, beta = 1).
  std::mt19937 engine(17);
  const auto M = Monarch<T>::random(12, 8, 3, 2, 2, engine);
  const auto B = Blast<T>::random(8, 12, 4, 3, 2, engine);
  const auto L = LowRank<T>::random(12, 12, 3, engine);
  const HostMatrix<T> m = M.to_dense();
  const HostMatrix<T> b = B.to_dense();
  const HostMatrix<T> l = L.to_dense();
  check_against_dense(M * B + L, HostMatrix<T>(m * b + l));
  check_against_dense(AnyOperator<T>(kron(B, M)), kron_dense(b, m));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(blr_errors)

BOOST_AUTO_TEST_CASE_TEMPLATE(lowrank_bad_input, T, ScalarTypes) {
  BOOST_CHECK_THROW(LowRank<T>(random_matrix<T>(4, 2), random_matrix<T>(3, 5)), ShapeError);
  HostMatrix<T> bad = random_matrix<T>(4, 2);
  bad(1, 1) = T(std::numeric_limits<RealOf<T>>::quiet_NaN());
  BOOST_CHECK_THROW(LowRank<T>(bad, random_matrix<T>(2, 5)), NumericalError);
  bad(1, 1) = T(std::numeric_limits<RealOf<T>>::infinity());
  BOOST_CHECK_THROW(LowRank<T>(random_matrix<T>(5, 2), bad.transpose()), NumericalError);
  std::mt19937 engine(1);
  BOOST_CHECK_THROW(LowRank<T>::random(4, -1, 2, engine), ShapeError);
  BOOST_CHECK_THROW(LowRank<T>::random(4, 4, Index(1) << 62, engine), ShapeError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_bad_input, T, ScalarTypes) {
  const Index n = 2 * 6 * 2;  // 2x2 grid of 6x6 blocks, rank 2: 4 blocks of 6x2 / 2x6
  auto make = [](Index rows, Index cols, Index rb, Index cb, Index rank, Index left_size,
                 Index right_size) {
    return Monarch<T>(rows, cols, rb, cb, rank, random_values<T>(left_size),
                      random_values<T>(right_size));
  };
  BOOST_CHECK_NO_THROW(make(12, 12, 2, 2, 2, 2 * n, 2 * n));
  BOOST_CHECK_THROW(make(12, 12, 5, 2, 2, 2 * n, 2 * n), ShapeError);  // 5 does not divide 12
  BOOST_CHECK_THROW(make(12, 12, 2, 5, 2, 2 * n, 2 * n), ShapeError);
  BOOST_CHECK_THROW(make(12, 12, 0, 2, 2, 2 * n, 2 * n), ShapeError);
  BOOST_CHECK_THROW(make(12, 12, 2, 2, -1, 0, 0), ShapeError);
  BOOST_CHECK_THROW(make(12, 12, 2, 2, 2, 2 * n - 1, 2 * n), ShapeError);  // wrong sizes
  BOOST_CHECK_THROW(make(12, 12, 2, 2, 2, 2 * n, 2 * n + 1), ShapeError);
  BOOST_CHECK_THROW(make(12, 12, 2, 2, 3, 2 * n, 2 * n), ShapeError);  // sizes of rank 2
  // A rank whose parameter count wraps to 0 matched empty arrays, and apply read past them.
  BOOST_CHECK_THROW(make(4, 4, 1, 1, Index(1) << 62, 0, 0), ShapeError);
  auto left = random_values<T>(2 * n);
  left[5] = T(std::numeric_limits<RealOf<T>>::quiet_NaN());
  BOOST_CHECK_THROW(Monarch<T>(12, 12, 2, 2, 2, left, random_values<T>(2 * n)), NumericalError);
  BOOST_CHECK_THROW(Monarch<T>(12, 12, 2, 2, 2, random_values<T>(2 * n), left), NumericalError);
  std::mt19937 engine(2);
  BOOST_CHECK_THROW(Monarch<T>::random(12, 10, 3, 3, 1, engine), ShapeError);
  const auto A = Monarch<T>::random(12, 12, 2, 3, 1, engine);
  BOOST_CHECK_THROW(A.left_block(2, 0), ShapeError);
  BOOST_CHECK_THROW(A.right_block(0, 3), ShapeError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blast_bad_input, T, ScalarTypes) {
  // 12x8 in a 3x2 grid, rank 2: U 12*2, s 3*2*2, V 2*8 values.
  auto make = [](Index rb, Index cb, Index rank, Index u, Index s, Index v) {
    return Blast<T>(12, 8, rb, cb, rank, random_values<T>(u), random_values<T>(s),
                    random_values<T>(v));
  };
  BOOST_CHECK_NO_THROW(make(3, 2, 2, 24, 12, 16));
  BOOST_CHECK_THROW(make(5, 2, 2, 24, 20, 16), ShapeError);  // 5 does not divide 12
  BOOST_CHECK_THROW(make(3, 3, 2, 24, 18, 16), ShapeError);  // 3 does not divide 8
  BOOST_CHECK_THROW(make(3, 0, 2, 24, 0, 16), ShapeError);
  BOOST_CHECK_THROW(make(3, 2, 2, 23, 12, 16), ShapeError);
  BOOST_CHECK_THROW(make(3, 2, 2, 24, 11, 16), ShapeError);
  BOOST_CHECK_THROW(make(3, 2, 2, 24, 12, 17), ShapeError);
  BOOST_CHECK_THROW(Blast<T>(4, 4, 4, 1, Index(1) << 62, {}, {}, {}), ShapeError);
  BOOST_CHECK_THROW(make(3, 2, 3, 24, 12, 16), ShapeError);
  const T nan(std::numeric_limits<RealOf<T>>::quiet_NaN());
  for (int which = 0; which < 3; ++which) {
    auto u = random_values<T>(24), s = random_values<T>(12), v = random_values<T>(16);
    (which == 0 ? u : which == 1 ? s : v)[3] = nan;
    BOOST_CHECK_THROW(Blast<T>(12, 8, 3, 2, 2, u, s, v), NumericalError);
  }
  std::mt19937 engine(3);
  BOOST_CHECK_THROW(Blast<T>::random(12, 8, 3, 3, 2, engine), ShapeError);
  const auto A = Blast<T>::random(12, 8, 3, 2, 2, engine);
  BOOST_CHECK_THROW(A.left_factor(3), ShapeError);
  BOOST_CHECK_THROW(A.right_factor(-1), ShapeError);
  BOOST_CHECK_THROW(A.diagonal(0, 2), ShapeError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_applications, T, ScalarTypes) {
  std::mt19937 engine(4);
  const auto M = Monarch<T>::random(6, 4, 3, 2, 1, engine);
  const auto B = Blast<T>::random(6, 4, 3, 2, 1, engine);
  const auto L = LowRank<T>::random(6, 4, 1, engine);
  HostMatrix<T> x(4, 2), y(6, 2), wrong(5, 2);
  x.setOnes();
  BOOST_CHECK_THROW(M.apply(Op::NoTrans, view(wrong), view(y)), ShapeError);
  BOOST_CHECK_THROW(B.apply(Op::Trans, view(x), view(y)), ShapeError);
  BOOST_CHECK_THROW(L.apply(Op::NoTrans, view(x), view(wrong)), ShapeError);
  // Without a device, device views are refused before any memory is read. (With one, a host
  // pointer dressed as a device view reaches the GPU path, which cannot tell.)
  if (cuda_available()) return;
  const auto dx = make_view<const T>(x.data(), 4, 2, Layout::ColMajor, MemorySpace::Device);
  const auto dy = make_view<T>(y.data(), 6, 2, Layout::ColMajor, MemorySpace::Device);
  BOOST_CHECK_THROW(M.apply(Op::NoTrans, dx, dy), DeviceError);
  BOOST_CHECK_THROW(B.apply(Op::NoTrans, dx, dy), DeviceError);
  BOOST_CHECK_THROW(L.apply(Op::NoTrans, dx, dy), DeviceError);
}

BOOST_AUTO_TEST_SUITE_END()

// The Kronecker-sparse forms that the GPU path applies (operators/blr/blr_ks_form.hpp) are
// the operators: checked here on the CPU, densely, for every grid shape.
BOOST_AUTO_TEST_CASE_TEMPLATE(gpu_ks_forms_equal_the_operators, T, ScalarTypes) {
  std::mt19937 gen(29);
  for (const Grid& g : grids) {
    if (g.rank == 0) continue;  // rank 0 never reaches the KS form
    BOOST_TEST_CONTEXT("grid " << g.rows << "x" << g.cols << " in " << g.row_blocks << "x"
                               << g.col_blocks << " rank " << g.rank) {
      const auto M = Monarch<T>::random(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, gen);
      const auto m = detail::monarch_ks_form(M);
      const HostMatrix<T> shuffled = m.left.to_dense() * m.shuffle.to_dense() * m.right.to_dense();
      BOOST_TEST(relative_error(shuffled, M.to_dense()) <= tolerance<T>());
      const auto B = Blast<T>::random(g.rows, g.cols, g.row_blocks, g.col_blocks, g.rank, gen);
      BOOST_TEST(relative_error(detail::blast_ks_form(B).to_dense(), B.to_dense()) <=
                 tolerance<T>());
    }
  }
}
