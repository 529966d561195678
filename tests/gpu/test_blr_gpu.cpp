// Block low-rank operators on the GPU (their KS form: cuBLAS and KS kernels, plus the
// Monarch shuffle as a row gather) against the CPU application, itself tested against
// dense matrices in tests/unit/test_blr.cpp.
#include "gpu_reference.hpp"
#include "operators/blr/blr_gemm_device.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
using HalfTypes = boost::mpl::list<half, bfloat16>;
using RealTypes = boost::mpl::list<float, double>;
struct Shape {
  Index rows, cols, row_blocks, col_blocks, rank;
};
// Square and rectangular grids, wide and tall matrices, rank above the block size, one block.
const std::vector<Shape> kShapes = {{64, 64, 4, 4, 3},     {96, 64, 4, 2, 5}, {30, 90, 3, 5, 8},
                                    {128, 48, 8, 3, 2},    {40, 56, 1, 1, 6}, {64, 64, 16, 16, 1},
                                    {256, 256, 16, 16, 16}};
}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_blr, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_blast_and_lowrank_match_cpu, T, ScalarTypes) {
  std::mt19937 gen(31);
  for (const Shape& s : kShapes) {
    BOOST_TEST_CONTEXT(s.rows << "x" << s.cols << " grid " << s.row_blocks << "x" << s.col_blocks
                              << " rank " << s.rank) {
      const auto M = Monarch<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto B = Blast<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto L = LowRank<T>::random(s.rows, s.cols, s.rank, gen);
      for (Index batch : {1, 7, 70}) {
        check_gpu_against_cpu(M, batch);
        check_gpu_against_cpu(B, batch);
        check_gpu_against_cpu(L, batch);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(blr_in_an_expression_on_the_device) {
  std::mt19937 gen(37);
  const auto M = Monarch<float>::random(64, 64, 8, 8, 2, gen);
  const auto B = Blast<float>::random(64, 64, 4, 4, 4, gen);
  check_gpu_against_cpu(M * B + 0.5f * M, 9);
}

// The permutation-free GEMM plans (operators/blr/blr_gemm_plan.hpp, checked on the CPU in
// tests/unit/test_blr_gemm_plan.cpp), run with cuBLAS.
BOOST_AUTO_TEST_CASE_TEMPLATE(gemm_plans_match_cpu, T, RealTypes) {
  std::mt19937 gen(41);
  for (const Shape& s : kShapes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
        for (Index batch : {1, 7, 70}) {
          const auto M =
              Monarch<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto B = Blast<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const Index in = op == Op::NoTrans ? s.cols : s.rows;
          const Index out = op == Op::NoTrans ? s.rows : s.cols;
          const HostMatrix<T> x = random_matrix<T>(in, batch);
          const HostMatrix<T> y0 = random_matrix<T>(out, batch);
          auto check = [&](const auto& A, const char* name) {
            HostMatrix<T> expected = y0;
            A.apply(op, view(x), view(expected), T(0.5), T(-2));
            const DeviceMatrix<T> xd = to_device(x, layout);
            DeviceMatrix<T> yd = to_device(y0, layout);
            BOOST_REQUIRE(detail::blr_plan_takes(xd.view(), yd.view()));
            detail::blr_plan_apply_device<T>(A, op, xd.view(), yd.view(), 0.5, -2.0,
                                             default_context());
            BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks
                                    << "x" << s.col_blocks << " rank " << s.rank << ", "
                                    << to_string(op) << ", " << to_string(layout)
                                    << ", B = " << batch) {
              BOOST_TEST(relative_error(HostMatrix<T>(yd.to_host()), expected) <= tolerance<T>(in));
            }
          };
          check(M, "monarch");
          check(B, "blast");
          check(LowRank<T>::random(s.rows, s.cols, s.rank, gen), "lowrank");
        }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(unfused_baselines_match_cpu, T, RealTypes) {
  // The bmm + permute baselines (blast_unfused_plan, monarch_unfused_plan), signal-contiguous
  // views with a padded column stride.
  std::mt19937 gen(47);
  for (const Shape& s : kShapes)
    for (Index batch : {1, 7, 70}) {
      const auto M = Monarch<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto B = Blast<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const HostMatrix<T> x = random_matrix<T>(s.cols + 3, batch);
      const HostMatrix<T> y0 = random_matrix<T>(s.rows + 3, batch);
      auto check = [&](const auto& A, const char* name) {
        HostMatrix<T> expected = y0.topRows(s.rows);
        A.apply(Op::NoTrans, view(HostMatrix<T>(x.topRows(s.cols))), view(expected), T(0.5), T(-2));
        const DeviceMatrix<T> xd = to_device(x);
        DeviceMatrix<T> yd = to_device(y0);
        detail::blr_unfused_apply_device<T>(A, xd.view().row_block(0, s.cols),
                                            yd.view().row_block(0, s.rows), 0.5, -2.0,
                                            default_context());
        const HostMatrix<T> got = yd.to_host();
        BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks << "x"
                                << s.col_blocks << " rank " << s.rank << ", B = " << batch) {
          BOOST_TEST(relative_error(HostMatrix<T>(got.topRows(s.rows)), expected) <=
                     tolerance<T>(s.cols));
          BOOST_TEST(relative_error(HostMatrix<T>(got.bottomRows(3)),
                                    HostMatrix<T>(y0.bottomRows(3))) == 0);
        }
      };
      check(M, "monarch");
      check(B, "blast");
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_signals_match_the_float_path, S, HalfTypes) {
  // apply_reduced_precision on half/bfloat16 signals: the GEMM plan on tensor cores when X
  // and Y share a layout, float copies otherwise, against the float CPU application to the
  // same (representable) values, alpha = 0.5 and beta = -2.
  std::mt19937 gen(43);
  for (const Shape& s : kShapes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor}) {
          const Index batch = 37;
          const auto M =
              Monarch<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto B =
              Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const Index in = op == Op::NoTrans ? s.cols : s.rows;
          const Index out = op == Op::NoTrans ? s.rows : s.cols;
          const HostMatrix<S> xs = random_matrix<float>(in, batch).cast<S>();
          const HostMatrix<S> y0s = random_matrix<float>(out, batch).cast<S>();
          auto check = [&](const auto& A, const char* name) {
            HostMatrix<float> expected = y0s.template cast<float>();
            A.apply(op, view(HostMatrix<float>(xs.template cast<float>())), view(expected), 0.5f,
                    -2.0f);
            const DeviceMatrix<S> xd = to_device(xs, lx);
            DeviceMatrix<S> yd = to_device(y0s, ly);
            apply_reduced_precision<S>(A, op, xd.view(), yd.view(), 0.5f, -2.0f);
            BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks
                                    << "x" << s.col_blocks << " rank " << s.rank << ", "
                                    << to_string(op) << ", X " << to_string(lx) << ", Y "
                                    << to_string(ly)) {
              // The values, the two intermediates and the output rounded to 16 bits: a few
              // units of roundoff (a wrong index gives an error of order one).
              BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()),
                                        expected) <= 8 * unit_roundoff_v<S>);
            }
          };
          check(M, "monarch");
          check(B, "blast");
          check(LowRank<float>::random(s.rows, s.cols, s.rank, gen), "lowrank");
        }
}

BOOST_AUTO_TEST_SUITE_END()
