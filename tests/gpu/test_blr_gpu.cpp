// Block low-rank operators on the GPU (their KS form: cuBLAS and KS kernels, plus the
// Monarch shuffle as a row gather) against the CPU application, itself tested against
// dense matrices in tests/unit/test_blr.cpp.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "bench/blr_layers.hpp"
#include "gpu_reference.hpp"
#include "operators/blr/blr_gemm_device.hpp"
#include "operators/blr/blr_gemm_plan.hpp"
#include "operators/blr/blr_plan_kernels.hpp"
#include "operators/blr/blr_skinny_kernel.hpp"

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
      // Float A on signal-contiguous views takes the GEMM plan at 1-2 and from 128 signals
      // (float_plan_preferred), the KS form otherwise.
      for (Index batch : {1, 2, 7, 70, 130}) {
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
  // Auto's path: cuBLAS, or the decode kernel (1 float signal); at 3 signals cuBLAS too (Auto
  // takes the skinny stages for 16-bit signals only, which the 16-bit test covers at 5).
  std::mt19937 gen(41);
  for (const Shape& s : kShapes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
        for (Index batch : {1, 3, 7, 70}) {
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
              check_error_within(relative_error(HostMatrix<T>(yd.to_host()), expected),
                                 tolerance<T>(in));
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
          check_error_within(relative_error(HostMatrix<T>(got.topRows(s.rows)), expected),
                             tolerance<T>(s.cols));
          BOOST_TEST(relative_error(HostMatrix<T>(got.bottomRows(3)),
                                    HostMatrix<T>(y0.bottomRows(3))) == 0);
        }
      };
      check(M, "monarch");
      check(B, "blast");
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_unfused_baselines_match_cpu, S, HalfTypes) {
  // The baselines of the benchmark's 16-bit rows (the denominators of its fused / unfused
  // ratios), against the float CPU application to the same (representable) values.
  std::mt19937 gen(53);
  for (const Shape& s : kShapes)
    for (Index batch : {1, 7, 70}) {
      const auto M =
          Monarch<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto B = Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const HostMatrix<S> xs = random_matrix<float>(s.cols, batch).cast<S>();
      const HostMatrix<S> y0s = random_matrix<float>(s.rows, batch).cast<S>();
      auto check = [&](const auto& A, const char* name) {
        HostMatrix<float> expected = y0s.template cast<float>();
        A.apply(Op::NoTrans, view(HostMatrix<float>(xs.template cast<float>())), view(expected),
                0.5f, -2.0f);
        const DeviceMatrix<S> xd = to_device(xs);
        DeviceMatrix<S> yd = to_device(y0s);
        detail::blr_unfused_apply_device<S>(A, xd.view(), yd.view(), 0.5f, -2.0f,
                                            default_context());
        BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks << "x"
                                << s.col_blocks << " rank " << s.rank << ", B = " << batch) {
          // Values, intermediates and output rounded to 16 bits (three stages for BLAST).
          BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()),
                                    expected) <= 8 * unit_roundoff_v<S>);
        }
      };
      check(M, "monarch");
      check(B, "blast");
    }
}

namespace {
// One operator on the device against its CPU application, at a few tokens and both ops:
// float signals by the public path and by the GEMM plan, half and bfloat16 signals by
// apply_reduced_precision (Auto: the skinny stages or decode kernel at 3 tokens where they
// apply, cuBLAS plans at 37), X and Y in `layout`.
template <class Operator>
void check_every_signal_type(const Operator& A, Layout layout, const std::string& name) {
  for (Op op : {Op::NoTrans, Op::Trans})
    for (Index batch : {3, 37}) {
      const Index in = op == Op::NoTrans ? A.cols() : A.rows();
      const Index out = op == Op::NoTrans ? A.rows() : A.cols();
      const HostMatrix<float> x = random_matrix<float>(in, batch);
      const HostMatrix<float> y0 = random_matrix<float>(out, batch);
      HostMatrix<float> expected = y0;
      A.apply(op, view(x), view(expected), 0.5f, -2.0f);
      const std::string context = name + " " + std::string(to_string(op)) + " " +
                                  std::string(to_string(layout)) + " B " + std::to_string(batch);
      for (bool plan : {false, true}) {
        const DeviceMatrix<float> xd = to_device(x, layout);
        DeviceMatrix<float> yd = to_device(y0, layout);
        if (plan) {
          detail::blr_plan_apply_device<float>(A, op, xd.view(), yd.view(), 0.5f, -2.0f,
                                               default_context());
        } else {
          A.apply(op, xd.view(), yd.view(), 0.5f, -2.0f);
        }
        BOOST_TEST_CONTEXT(context << (plan ? " float plan" : " float")) {
          check_error_within(relative_error(yd.to_host(), expected), tolerance<float>(in));
        }
      }
      auto check_16 = [&](auto storage, const char* type_name) {
        using S = decltype(storage);
        const double error = reduced_precision_error<S>(
            A, op, HostMatrix<S>(x.cast<S>()), HostMatrix<S>(y0.cast<S>()), layout, layout);
        BOOST_TEST_CONTEXT(context << " " << type_name) {
          check_error_within(error, 8 * unit_roundoff_v<S>);
        }
      };
      check_16(half(), "half");
      check_16(bfloat16(), "bfloat16");
    }
}
}  // namespace

BOOST_AUTO_TEST_CASE(table3_layers_match_cpu_at_a_few_tokens) {
  // Every layer of the benchmark (bench/blr_layers.hpp) with its (r, b), at 3 and 37 tokens.
  std::mt19937 gen(59);
  for (const bench::BlrLayer& l : bench::kBlrLayers) {
    const std::string name = l.model + "/" + l.name;
    const Layout layout = l.in < l.out ? Layout::ColMajor : Layout::RowMajor;
    check_every_signal_type(LowRank<float>::random(l.out, l.in, l.lowrank_r, gen), layout,
                            name + " lowrank");
    if (l.monarch_b > 0)
      check_every_signal_type(Monarch<float>::random(l.out, l.in, l.monarch_b, l.monarch_b,
                                                     l.monarch_rank_per_block(), gen),
                              layout, name + " monarch");
    check_every_signal_type(Blast<float>::random(l.out, l.in, l.blast_b, l.blast_b, l.blast_r, gen),
                            layout, name + " blast");
  }
}

BOOST_AUTO_TEST_CASE(random_block_grids_match_cpu) {
  // Grids of 1 to 12 blocks per side, blocks of 1 to 24 rows and columns, ranks 1 to 24 (above
  // the block size too), either layout.
  std::mt19937 gen(61);
  for (int trial = 0; trial < 24; ++trial) {
    const Index row_blocks = random_index(1, 12), col_blocks = random_index(1, 12);
    const Index rows = row_blocks * random_index(1, 24), cols = col_blocks * random_index(1, 24);
    const Index rank = random_index(1, 24);
    const Layout layout = trial % 2 == 0 ? Layout::ColMajor : Layout::RowMajor;
    std::ostringstream name;
    name << rows << "x" << cols << " grid " << row_blocks << "x" << col_blocks << " rank " << rank;
    check_every_signal_type(Monarch<float>::random(rows, cols, row_blocks, col_blocks, rank, gen),
                            layout, "monarch " + name.str());
    check_every_signal_type(Blast<float>::random(rows, cols, row_blocks, col_blocks, rank, gen),
                            layout, "blast " + name.str());
  }
}

BOOST_AUTO_TEST_CASE(values_beyond_the_half_range_are_refused_for_half_signals) {
  // Rounded to half, 1e5 would be Inf and every output it touches Inf or NaN.
  HostMatrix<float> left = random_matrix<float>(16, 2);
  const HostMatrix<float> right = random_matrix<float>(2, 16);
  left(3, 1) = 1e5f;
  const LowRank<float> A(left, right);
  const HostMatrix<float> x = random_matrix<float>(16, 4);
  const DeviceMatrix<half> xh = to_device(HostMatrix<half>(x.cast<half>()));
  DeviceMatrix<half> yh(16, 4);
  BOOST_CHECK_THROW(apply_reduced_precision<half>(A, Op::NoTrans, xh.view(), yh.view()),
                    NumericalError);
  // bfloat16 holds it.
  const HostMatrix<bfloat16> xb = x.cast<bfloat16>();
  HostMatrix<float> expected(16, 4);
  A.apply(Op::NoTrans, view(HostMatrix<float>(xb.cast<float>())), view(expected));
  const DeviceMatrix<bfloat16> xbd = to_device(xb);
  DeviceMatrix<bfloat16> ybd(16, 4);
  apply_reduced_precision<bfloat16>(A, Op::NoTrans, xbd.view(), ybd.view());
  check_error_within(relative_error(HostMatrix<float>(ybd.to_host().cast<float>()), expected),
                     8 * unit_roundoff_v<bfloat16>);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sixteen_bit_signals_match_the_float_path, S, HalfTypes) {
  // apply_reduced_precision on half/bfloat16 signals: the GEMM plan on tensor cores when X
  // and Y share a layout, float copies otherwise, against the float CPU application to the
  // same (representable) values, alpha = 0.5 and beta = -2; 37 tokens, and 1 and 16 (the
  // decode sizes) and 5 (Auto's skinny stages for A).
  std::mt19937 gen(43);
  for (const Shape& s : kShapes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout lx : {Layout::ColMajor, Layout::RowMajor})
        for (Layout ly : {Layout::ColMajor, Layout::RowMajor})
          for (Index batch : {37, 1, 16, 5}) {
            const auto M =
                Monarch<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
            const auto B =
                Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
            const Index in = op == Op::NoTrans ? s.cols : s.rows;
            const Index out = op == Op::NoTrans ? s.rows : s.cols;
            const HostMatrix<S> xs = random_matrix<float>(in, batch).cast<S>();
            const HostMatrix<S> y0s = random_matrix<float>(out, batch).cast<S>();
            auto check = [&](const auto& A, const char* name) {
              const double error = reduced_precision_error<S>(A, op, xs, y0s, lx, ly);
              BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks
                                      << "x" << s.col_blocks << " rank " << s.rank << ", "
                                      << to_string(op) << ", X " << to_string(lx) << ", Y "
                                      << to_string(ly) << ", B = " << batch) {
                // The values, the two intermediates and the output rounded to 16 bits: a few
                // units of roundoff (a wrong index gives an error of order one).
                check_error_within(error, 8 * unit_roundoff_v<S>);
              }
            };
            check(M, "monarch");
            check(B, "blast");
            check(LowRank<float>::random(s.rows, s.cols, s.rank, gen), "lowrank");
          }
}

namespace {
// The error bound of a plan path on S signals against the float CPU application to the same
// (representable) values, `cols` values summed per output: for 16-bit signals the values and the
// output are rounded to 16 bits (the decode path keeps its intermediates in fp32, the others
// round them to 16 bits as well), a few units of roundoff.
template <class S>
double plan_error_bound(Index cols) {
  if constexpr (is_reduced_precision_v<S>) return 8 * unit_roundoff_v<S>;
  return tolerance<float>(cols);
}

// Y = 0.5 A X + beta Y by a forced plan path on S signals in `layout`, X and Y views inside
// matrices with three spare rows (ColMajor) or columns (RowMajor), against the float CPU
// application to the same (representable) values (plan_error_bound), the padding untouched.
template <class S, class Operator>
void check_forced_path(const Operator& A, Layout layout, Index batch, float beta,
                       detail::PlanPath path) {
  const Index rows = A.rows(), cols = A.cols();
  const HostMatrix<S> xs = random_matrix<float>(cols + 3, batch + 3).cast<S>();
  const HostMatrix<S> y0s = random_matrix<float>(rows + 3, batch + 3).cast<S>();
  HostMatrix<float> expected = y0s.topLeftCorner(rows, batch).template cast<float>();
  A.apply(Op::NoTrans,
          view(HostMatrix<float>(xs.topLeftCorner(cols, batch).template cast<float>())),
          view(expected), 0.5f, beta);
  const DeviceMatrix<S> xd = to_device(xs, layout);
  DeviceMatrix<S> yd = to_device(y0s, layout);
  detail::blr_plan_apply_device<S>(A, Op::NoTrans, xd.view().row_block(0, cols).col_block(0, batch),
                                   yd.view().row_block(0, rows).col_block(0, batch), 0.5f, beta,
                                   default_context(), path);
  const HostMatrix<float> got = yd.to_host().template cast<float>();
  check_error_within(relative_error(HostMatrix<float>(got.topLeftCorner(rows, batch)), expected),
                     plan_error_bound<S>(cols));
  BOOST_TEST(relative_error(HostMatrix<float>(got.bottomRows(3)),
                            HostMatrix<float>(y0s.bottomRows(3).template cast<float>())) == 0);
  BOOST_TEST(relative_error(HostMatrix<float>(got.rightCols(3)),
                            HostMatrix<float>(y0s.rightCols(3).template cast<float>())) == 0);
}
}  // namespace

using DecodeTypes = boost::mpl::list<float, half, bfloat16>;
BOOST_AUTO_TEST_CASE_TEMPLATE(decode_and_skinny_paths_match_cpu, S, DecodeTypes) {
  // The few-token paths, forced, against the float CPU application to the same
  // (representable) values: the one-launch decode kernel (operators/blr/blr_decode.cu, 1 to
  // 8 tokens), the skinny stages chained by programmatic dependent launch
  // (operators/blr/blr_skinny.cu, 1 to 16 tokens: every kernel width, the depth split over
  // clusters where the entries are few, BLAST's coupling folded) and the cuBLAS plan on
  // signals padded to 8 (1 to 7 tokens). Every grid shape (ragged
  // row groups and column tiles included), both layouts, padded leading dimensions,
  // alpha = 0.5 and beta = -2 (beta = 0 once), Monarch (a first stage of all output blocks per
  // input block), BLAST (three stages) and LowRank.
  std::mt19937 gen(53);
  using detail::PlanPath;
  // Besides the common shapes, deep ranks: the last stage's k split over many blocks (added
  // with atomics), BLAST's coupling folded into it with chunks of k that one row set covers
  // (blocks of 256 rows) or that straddle blocks (200 rows).
  std::vector<Shape> shapes = kShapes;
  shapes.push_back({1024, 512, 4, 4, 1000});
  shapes.push_back({600, 300, 3, 3, 700});
  for (PlanPath path : {PlanPath::Decode, PlanPath::Skinny, PlanPath::GemmPadded})
    for (const Shape& s : shapes)
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
        for (Index batch : {1, 2, 3, 5, 8, 16}) {
          if (path == PlanPath::Decode && batch > detail::kDecodeMaxBatch) continue;
          if (path == PlanPath::GemmPadded && batch >= detail::kPaddedSignals) continue;
          const auto M =
              Monarch<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto B =
              Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto L = LowRank<float>::random(s.rows, s.cols, s.rank, gen);
          const float beta = batch == 3 ? 0.0f : -2.0f;
          auto check = [&](const auto& A, const char* name) {
            BOOST_TEST_CONTEXT((path == PlanPath::Decode   ? "decode "
                                : path == PlanPath::Skinny ? "skinny "
                                                           : "padded cuBLAS ")
                               << name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks
                               << "x" << s.col_blocks << " rank " << s.rank << ", "
                               << to_string(layout) << ", B = " << batch) {
              check_forced_path<S>(A, layout, batch, beta, path);
            }
          };
          check(M, "monarch");
          check(B, "blast");
          check(L, "lowrank");
        }
  // Where a path does not apply, forcing it is a DeviceError (the default path then runs
  // cuBLAS): A^T, and more than 8 (decode) or 16 (skinny) tokens.
  const auto A = Blast<float>::random(64, 64, 4, 4, 3, gen);
  const DeviceMatrix<S> x1 = to_device(HostMatrix<S>(random_matrix<float>(64, 1).cast<S>()));
  DeviceMatrix<S> y1 = to_device(HostMatrix<S>(random_matrix<float>(64, 1).cast<S>()));
  for (PlanPath path : {PlanPath::Decode, PlanPath::Skinny}) {
    BOOST_CHECK_THROW(detail::blr_plan_apply_device<S>(A, Op::Trans, x1.view(), y1.view(), 1.0f,
                                                       0.0f, default_context(), path),
                      DeviceError);
    const Index too_many = path == PlanPath::Decode ? 9 : 17;
    const DeviceMatrix<S> xn =
        to_device(HostMatrix<S>(random_matrix<float>(64, too_many).cast<S>()));
    DeviceMatrix<S> yn = to_device(HostMatrix<S>(random_matrix<float>(64, too_many).cast<S>()));
    BOOST_CHECK_THROW(detail::blr_plan_apply_device<S>(A, Op::NoTrans, xn.view(), yn.view(), 1.0f,
                                                       0.0f, default_context(), path),
                      DeviceError);
  }
  // The padded cuBLAS plan takes A^T (and 7 tokens at most).
  const HostMatrix<S> x3 = random_matrix<float>(64, 3).cast<S>();
  HostMatrix<float> expected = HostMatrix<float>::Zero(64, 3);
  A.apply(Op::Trans, view(HostMatrix<float>(x3.template cast<float>())), view(expected), 1.0f,
          0.0f);
  const DeviceMatrix<S> x3d = to_device(x3);
  DeviceMatrix<S> y3d(64, 3, Layout::ColMajor, default_context());
  detail::blr_plan_apply_device<S>(A, Op::Trans, x3d.view(), y3d.view(), 1.0f, 0.0f,
                                   default_context(), PlanPath::GemmPadded);
  BOOST_TEST(relative_error(HostMatrix<float>(y3d.to_host().template cast<float>()), expected) <=
             plan_error_bound<S>(64));
  const DeviceMatrix<S> x8 = to_device(HostMatrix<S>(random_matrix<float>(64, 8).cast<S>()));
  DeviceMatrix<S> y8(64, 8, Layout::ColMajor, default_context());
  BOOST_CHECK_THROW(detail::blr_plan_apply_device<S>(A, Op::NoTrans, x8.view(), y8.view(), 1.0f,
                                                     0.0f, default_context(), PlanPath::GemmPadded),
                    DeviceError);
}

BOOST_AUTO_TEST_CASE(skinny_layers_chained_without_syncs_match_cpu) {
  // Llama-7B-sized layers (4096 x 4096: Monarch 16 x 16 of rank 64 per block, BLAST 16 x 16
  // of rank 1024, LowRank of rank 1024) applied one after the other by the skinny path with
  // no synchronization between them, each layer's output the next one's input: every stage
  // starts while the previous kernel runs and reads its weights before it waits, so a stage
  // that read its activations or wrote its output too early shows here. Two rounds, the
  // second into the same buffers (which the first round's last kernels may still be reading
  // when the second starts). bf16, 2 tokens, against the float CPU chain.
  Context& ctx = default_context();
  std::mt19937 gen(71);
  const Index n = 4096, tokens = 2;
  const auto M = Monarch<float>::random(n, n, 16, 16, 64, gen);
  const auto B = Blast<float>::random(n, n, 16, 16, 1024, gen);
  const auto L = LowRank<float>::random(n, n, 1024, gen);
  const HostMatrix<bfloat16> xs = random_matrix<float>(n, tokens).cast<bfloat16>();
  HostMatrix<float> expected = xs.cast<float>();
  for (int round = 0; round < 2; ++round) {
    auto layer = [&](const auto& A) {
      // Each layer's input rounded to bf16 as the GPU holds it.
      const HostMatrix<float> in = expected.cast<bfloat16>().cast<float>();
      HostMatrix<float> out = HostMatrix<float>::Zero(n, tokens);
      A.apply(Op::NoTrans, view(in), view(out), 1.0f, 0.0f);
      expected = out;
    };
    layer(M), layer(B), layer(L);
  }
  const DeviceMatrix<bfloat16> x = to_device(xs);
  DeviceMatrix<bfloat16> y1(n, tokens, Layout::ColMajor, ctx), y2(n, tokens, Layout::ColMajor, ctx),
      y3(n, tokens, Layout::ColMajor, ctx);
  using detail::PlanPath;
  for (int round = 0; round < 2; ++round) {
    const ConstView<bfloat16> in = round == 0 ? ConstView<bfloat16>(x.view()) : y3.view();
    // (round 1 reads y3 into y1: y3 is then rewritten by the last layer)
    detail::blr_plan_apply_device<bfloat16>(M, Op::NoTrans, in, y1.view(), 1.0f, 0.0f, ctx,
                                            PlanPath::Skinny);
    detail::blr_plan_apply_device<bfloat16>(B, Op::NoTrans, y1.view(), y2.view(), 1.0f, 0.0f, ctx,
                                            PlanPath::Skinny);
    detail::blr_plan_apply_device<bfloat16>(L, Op::NoTrans, y2.view(), y3.view(), 1.0f, 0.0f, ctx,
                                            PlanPath::Skinny);
  }
  BOOST_TEST(relative_error(HostMatrix<float>(y3.to_host().template cast<float>()), expected) <=
             16 * unit_roundoff_v<bfloat16>);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fused_path_matches_cpu, S, HalfTypes) {
  // The one-launch tensor-core kernel (operators/blr/blr_fused.cu), forced, against the float
  // CPU application to the same (representable) values: every grid shape and two larger ones
  // (several 64 x 64 tiles and k chunks; k up to 2048, which the kernel splits into parts
  // added by the tile's last block, whose counters every call leaves zeroed for the next
  // one), A and A^T, both layouts, 1, 37 and 130 tokens
  // (partial tiles), views padded by 3 (single-value loads) or 8 (16-byte loads where the
  // sizes allow), alpha = 0.5 and beta = -2, or beta = 0 on a Y of NaN (never read).
  std::mt19937 gen(59);
  std::vector<Shape> shapes = kShapes;
  shapes.push_back({512, 384, 4, 3, 40});
  shapes.push_back({96, 2048, 2, 4, 24});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Shape& s : shapes)
    for (Op op : {Op::NoTrans, Op::Trans})
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
        for (Index batch : {1, 37, 130}) {
          const auto M =
              Monarch<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto B =
              Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
          const auto L = LowRank<float>::random(s.rows, s.cols, s.rank, gen);
          const Index in = op == Op::NoTrans ? s.cols : s.rows;
          const Index out = op == Op::NoTrans ? s.rows : s.cols;
          const Index pad = batch == 37 ? 3 : 8;
          const float beta = batch == 130 ? 0.0f : -2.0f;
          const HostMatrix<S> xs = random_matrix<float>(in + pad, batch + pad).cast<S>();
          HostMatrix<S> y0s = random_matrix<float>(out + pad, batch + pad).cast<S>();
          if (beta == 0.0f) y0s.topLeftCorner(out, batch).setConstant(S(nan));
          auto check = [&](const auto& A, const char* name) {
            HostMatrix<float> expected =
                beta == 0.0f
                    ? HostMatrix<float>(HostMatrix<float>::Zero(out, batch))
                    : HostMatrix<float>(y0s.topLeftCorner(out, batch).template cast<float>());
            A.apply(op, view(HostMatrix<float>(xs.topLeftCorner(in, batch).template cast<float>())),
                    view(expected), 0.5f, beta);
            const DeviceMatrix<S> xd = to_device(xs, layout);
            DeviceMatrix<S> yd = to_device(y0s, layout);
            detail::blr_plan_apply_device<S>(A, op, xd.view().row_block(0, in).col_block(0, batch),
                                             yd.view().row_block(0, out).col_block(0, batch), 0.5f,
                                             beta, default_context(), detail::PlanPath::Fused);
            const HostMatrix<float> got = yd.to_host().template cast<float>();
            BOOST_TEST_CONTEXT(name << " " << s.rows << "x" << s.cols << " grid " << s.row_blocks
                                    << "x" << s.col_blocks << " rank " << s.rank << ", "
                                    << to_string(op) << ", " << to_string(layout)
                                    << ", B = " << batch) {
              // The values, the intermediates and the output rounded to 16 bits.
              check_error_within(
                  relative_error(HostMatrix<float>(got.topLeftCorner(out, batch)), expected),
                  8 * unit_roundoff_v<S>);
              // The padding is untouched.
              BOOST_TEST(relative_error(
                             HostMatrix<float>(got.bottomRows(pad)),
                             HostMatrix<float>(y0s.bottomRows(pad).template cast<float>())) == 0);
              BOOST_TEST(relative_error(
                             HostMatrix<float>(got.rightCols(pad)),
                             HostMatrix<float>(y0s.rightCols(pad).template cast<float>())) == 0);
            }
          };
          check(M, "monarch");
          check(B, "blast");
          check(L, "lowrank");
        }
  // Float signals have no fused path: a DeviceError (the default path runs cuBLAS).
  const auto A = Blast<float>::random(64, 64, 4, 4, 3, gen);
  const DeviceMatrix<float> x = to_device(HostMatrix<float>(random_matrix<float>(64, 20)));
  DeviceMatrix<float> y = to_device(HostMatrix<float>(random_matrix<float>(64, 20)));
  BOOST_CHECK_THROW(
      detail::blr_plan_apply_device<float>(A, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f,
                                           default_context(), detail::PlanPath::Fused),
      DeviceError);
}

BOOST_AUTO_TEST_CASE(decode_calls_in_a_row_leave_their_workspace_clean) {
  // The decode kernel keeps its fp32 accumulators in a workspace of the context (one per
  // layout) that every call leaves zeroed: Z1 and Z2 in two copies used in turn, Y's zeroed
  // by the block that reads them. Shapes deep enough (k >= 256) that the stages split k over
  // several blocks and add with atomics; two operators of one shape (one workspace) called in
  // turn with new signals, a call of another shape between them, then replays of a CUDA
  // graph of three calls; every result against the CPU (a dirty accumulator adds a previous
  // call's sums: an error of order 1).
  Context& ctx = default_context();
  std::mt19937 gen(71);
  const double bound = 8 * unit_roundoff_v<bfloat16>;
  auto check = [&](const auto& first, const auto& second, const auto& other, const char* name) {
    for (Index batch : {1, 2}) {
      auto call = [&](const auto& A, const HostMatrix<bfloat16>& xs, DeviceMatrix<bfloat16>& yd) {
        detail::blr_plan_apply_device<bfloat16>(A, Op::NoTrans, to_device(xs).view(), yd.view(),
                                                1.0f, 0.0f, ctx, detail::PlanPath::Decode);
      };
      auto expect = [&](const auto& A, const HostMatrix<bfloat16>& xs) {
        HostMatrix<float> y = HostMatrix<float>::Zero(A.rows(), batch);
        A.apply(Op::NoTrans, view(HostMatrix<float>(xs.cast<float>())), view(y), 1.0f, 0.0f);
        return y;
      };
      int n = 0;
      for (const auto* A : {&first, &second, &other, &first, &second, &first, &first}) {
        const HostMatrix<bfloat16> xs =
            random_matrix<float>(A->cols(), batch).template cast<bfloat16>();
        DeviceMatrix<bfloat16> yd(A->rows(), batch, Layout::ColMajor, ctx);
        call(*A, xs, yd);
        BOOST_TEST_CONTEXT(name << ", B = " << batch << ", call " << n++) {
          BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()),
                                    expect(*A, xs)) <= bound);
        }
      }
      const HostMatrix<bfloat16> xs =
          random_matrix<float>(second.cols(), batch).template cast<bfloat16>();
      const DeviceMatrix<bfloat16> xd = to_device(xs);
      DeviceMatrix<bfloat16> yd(second.rows(), batch, Layout::ColMajor, ctx);
      median_graph_seconds_each(ctx, {[&] {
                                  detail::blr_plan_apply_device<bfloat16>(
                                      second, Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, ctx,
                                      detail::PlanPath::Decode);
                                }},
                                3, 3, 0);
      BOOST_TEST_CONTEXT(name << ", B = " << batch << ", graph replays") {
        BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()),
                                  expect(second, xs)) <= bound);
      }
    }
  };
  check(LowRank<float>::random(512, 2048, 256, gen), LowRank<float>::random(512, 2048, 256, gen),
        LowRank<float>::random(256, 1024, 128, gen), "lowrank");
  check(Monarch<float>::random(512, 2048, 4, 8, 32, gen),
        Monarch<float>::random(512, 2048, 4, 8, 32, gen),
        Monarch<float>::random(1024, 512, 8, 4, 16, gen), "monarch");
  check(Blast<float>::random(512, 2048, 4, 8, 64, gen),
        Blast<float>::random(512, 2048, 4, 8, 64, gen),
        Blast<float>::random(1024, 512, 8, 4, 32, gen), "blast");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blast_folded_plans_match_cpu, S, DecodeTypes) {
  // BLAST's folded plan (blast_folded_plan: the couplings folded into the first factors, or
  // the last where that is less work; two cuBLAS GEMMs), forced, against the float CPU
  // application to the same (representable) values: every grid shape (both folds occur),
  // both layouts, padded views, alpha = 0.5 and beta = -2 (beta = 0 once). Then Auto where it
  // folds (16-bit signals, 130 tokens, a grid whose fold is cheap), and the errors where no
  // fold applies.
  std::mt19937 gen(59);
  using detail::PlanPath;
  auto run = [&](const Blast<float>& A, Layout layout, Index batch, PlanPath path) {
    check_forced_path<S>(A, layout, batch, batch == 1 ? 0.0f : -2.0f, path);
  };
  // Besides the common shapes, GPT2-S c_attn's proportions (the first fold) and c_proj's (the
  // last).
  std::vector<Shape> shapes = kShapes;
  shapes.push_back({384, 96, 6, 6, 12});
  shapes.push_back({96, 384, 6, 6, 12});
  for (const Shape& s : shapes)
    for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
      for (Index batch : {1, 37, 130}) {
        const BlockGrid grid{s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank};
        BOOST_TEST_CONTEXT(
            "folded (" << (detail::blast_cheaper_fold(grid) == detail::BlastFold::First ? "first"
                                                                                        : "last")
                       << ") " << s.rows << "x" << s.cols << " grid " << s.row_blocks << "x"
                       << s.col_blocks << " rank " << s.rank << ", " << to_string(layout)
                       << ", B = " << batch) {
          run(Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen), layout,
              batch, PlanPath::GemmFolded);
        }
      }
  if constexpr (is_reduced_precision_v<S>) {
    const Shape s{384, 96, 3, 3, 16};
    const BlockGrid grid{s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank};
    BOOST_TEST_REQUIRE(detail::blast_folds(
        grid, Op::NoTrans, detail::PlanSignals{Layout::ColMajor, 130, s.cols, s.rows, 2}));
    BOOST_TEST_CONTEXT("Auto, folded, 130 tokens") {
      run(Blast<float>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen),
          Layout::ColMajor, 130, PlanPath::Auto);
    }
  }
  // A^T, Monarch and LowRank have no folded plan.
  const auto blast = Blast<float>::random(64, 64, 4, 4, 3, gen);
  const DeviceMatrix<S> x = to_device(HostMatrix<S>(random_matrix<float>(64, 8).cast<S>()));
  DeviceMatrix<S> y(64, 8);
  BOOST_CHECK_THROW(detail::blr_plan_apply_device<S>(blast, Op::Trans, x.view(), y.view(), 1.0f,
                                                     0.0f, default_context(), PlanPath::GemmFolded),
                    DeviceError);
  BOOST_CHECK_THROW(detail::blr_plan_apply_device<S>(Monarch<float>::random(64, 64, 4, 4, 3, gen),
                                                     Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f,
                                                     default_context(), PlanPath::GemmFolded),
                    DeviceError);
}

BOOST_AUTO_TEST_CASE(plans_replayed_from_a_cuda_graph_match_cpu) {
  // The bf16 plan paths captured in a CUDA graph (median_graph_seconds_each without warm-up
  // runs, so only the graph's replays write Y, poisoned with NaN before): the cooperative
  // decode kernel (B = 1), the cooperative fused kernel (its workspace a stream-ordered
  // allocation inside the graph, its split counters made by the earlier calls), cuBLAS with
  // the streamed coupling on CUDA cores (BLAST 4 x 4) and on tensor cores (BLAST 12 x 12,
  // B = 40: leading dimensions multiples of 8), Monarch's plan, and Auto (which
  // takes cuBLAS while capturing, except on large layers); alpha = 0.5, beta = 0. An operator's
  // first call uploads its values (a synchronous copy, which a capture cannot hold), so one call
  // runs before, into another Y; a capture that fails gives NaN seconds and leaves the context
  // usable.
  Context& ctx = default_context();
  std::mt19937 gen(53);
  const auto blast4 = Blast<float>::random(96, 64, 4, 4, 8, gen);
  const auto blast12 = Blast<float>::random(96, 96, 12, 12, 8, gen);
  const auto monarch = Monarch<float>::random(96, 64, 4, 4, 5, gen);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  using detail::PlanPath;
  for (PlanPath path : {PlanPath::Auto, PlanPath::Gemm, PlanPath::Fused, PlanPath::Decode,
                        PlanPath::Skinny, PlanPath::GemmPadded, PlanPath::GemmFolded})
    for (Index batch : {1, 3, 40}) {
      if (path == PlanPath::Decode && batch > detail::kDecodeMaxBatch) continue;
      if (path == PlanPath::Skinny && batch > detail::kSkinnyMaxTokens) continue;
      if (path == PlanPath::GemmPadded && batch >= detail::kPaddedSignals) continue;
      const char* path_name = path == PlanPath::Auto         ? "auto"
                              : path == PlanPath::Gemm       ? "cuBLAS"
                              : path == PlanPath::Fused      ? "fused"
                              : path == PlanPath::Decode     ? "decode"
                              : path == PlanPath::Skinny     ? "skinny"
                              : path == PlanPath::GemmPadded ? "padded cuBLAS"
                                                             : "folded cuBLAS";
      auto check = [&](const auto& A, const char* name, Index signals) {
        const HostMatrix<bfloat16> xs =
            random_matrix<float>(A.cols(), signals).template cast<bfloat16>();
        HostMatrix<float> expected = HostMatrix<float>::Zero(A.rows(), signals);
        A.apply(Op::NoTrans, view(HostMatrix<float>(xs.cast<float>())), view(expected), 0.5f, 0.0f);
        const DeviceMatrix<bfloat16> xd = to_device(xs);
        DeviceMatrix<bfloat16> yd = to_device(HostMatrix<bfloat16>(
            HostMatrix<float>::Constant(A.rows(), signals, nan).template cast<bfloat16>()));
        DeviceMatrix<bfloat16> first(A.rows(), signals, Layout::ColMajor, ctx);
        detail::blr_plan_apply_device<bfloat16>(A, Op::NoTrans, xd.view(), first.view(), 0.5f, 0.0f,
                                                ctx, path);
        const std::vector<double> seconds = median_graph_seconds_each(
            ctx, {[&] {
              detail::blr_plan_apply_device<bfloat16>(A, Op::NoTrans, xd.view(), yd.view(), 0.5f,
                                                      0.0f, ctx, path);
            }},
            1, 1, 0);
        BOOST_TEST_CONTEXT(name << ", B = " << signals << ", " << path_name) {
          BOOST_TEST(std::isfinite(seconds[0]));  // NaN: the calls could not be captured
          BOOST_TEST(relative_error(HostMatrix<float>(yd.to_host().template cast<float>()),
                                    expected) <= 8 * unit_roundoff_v<bfloat16>);
        }
      };
      check(blast4, "blast 4 x 4", batch);
      check(blast12, "blast 12 x 12", batch);
      if (path != PlanPath::GemmFolded) check(monarch, "monarch 4 x 4", batch);
      // Auto takes the decode kernel under capture on large layers (decode_replays_faster):
      // 1 signal on Llama-7B's down (46 MB of bf16 weights), 2 on its qkvo (16.8 MB).
      if (path == PlanPath::Auto && batch == 1) {
        check(Monarch<float>::random(4096, 11008, 16, 16, 96, gen), "monarch 4096 x 11008", 1);
        check(Monarch<float>::random(4096, 4096, 16, 16, 64, gen), "monarch 4096 x 4096", 2);
      }
    }
}

using CopyTypes = boost::mpl::list<float, double, half, bfloat16>;
BOOST_AUTO_TEST_CASE_TEMPLATE(strided_copies_match_a_loop, T, CopyTypes) {
  // The unfused baselines' 4-D strided copy (blr_plan_kernels.cu) against a host loop: runs
  // (one dimension contiguous on both sides), transposes (the dimension contiguous in src is
  // another one in dst: 32 x 32 tiles, here with partial tiles, and an outer dimension larger
  // than the grid's 65535 rows; tiles of 16-byte vectors, a warp each), dimensions of one
  // value, plain and scaled (alpha = 0.5, beta = -2 over Y's old values).
  struct Case {
    std::array<Index, 4> dims;
    std::array<int, 4> src_order, dst_order;  // dimensions from slowest to fastest
    Index src_offset = 0;                     // values before src's first (alignment)
  };
  const std::vector<Case> cases = {
      {{3, 5, 7, 70}, {0, 1, 2, 3}, {2, 0, 1, 3}},    // runs of 70
      {{1, 16, 70, 45}, {0, 1, 2, 3}, {0, 3, 2, 1}},  // (L, B, r) -> (r, B, L)
      {{2, 33, 40, 9}, {0, 1, 2, 3}, {1, 0, 3, 2}},   // swap the two fastest, 33 x 9 tails
      {{4, 1, 65, 3}, {3, 2, 1, 0}, {0, 1, 2, 3}},    // reversed order
      // Runs of whole 16-byte vectors in every type: short ones (a fraction of a warp per
      // run), long ones over several blocks, and the Monarch baseline's (L, B, K, r) ->
      // (K, B, L, r) at small sizes.
      {{3, 5, 7, 64}, {0, 1, 2, 3}, {2, 0, 1, 3}},
      {{1, 1, 3, 4096}, {0, 1, 2, 3}, {0, 2, 1, 3}},
      {{4, 6, 5, 16}, {0, 1, 2, 3}, {2, 1, 0, 3}},
      {{3, 5, 7, 64}, {0, 1, 2, 3}, {2, 0, 1, 3}, 1},  // src one value off 16 bytes: values
      {{1, 70000, 2, 3}, {0, 1, 2, 3}, {0, 1, 3, 2}},  // tiles over more than 65535 grid rows
      {{1, 512, 64, 16}, {0, 1, 2, 3}, {0, 1, 3, 2}},  // Monarch's r <-> K swap, small
      // Transposes in tiles of 16-byte vectors (a warp per tile): small matrices dense on
      // both sides with the outer dimensions kept or swapped; BLAST's (L, B, r) -> (r, B, L)
      // and (r, B, K) -> (K, B, r), whose long side is cut into tiles (r = 1488: a shorter
      // last tile); a square one cut on both sides in 64-bit types, and one with shorter last
      // tiles on both sides; and one a value off 16 bytes (single values instead).
      {{3, 7, 32, 8}, {0, 1, 2, 3}, {0, 1, 3, 2}},
      {{3, 7, 32, 8}, {0, 1, 2, 3}, {1, 0, 3, 2}},
      {{1, 16, 5, 256}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 256, 5, 16}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 16, 3, 1488}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 1488, 3, 16}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{2, 3, 64, 64}, {0, 1, 2, 3}, {0, 1, 3, 2}},
      {{2, 3, 200, 72}, {0, 1, 2, 3}, {0, 1, 3, 2}},
      {{3, 7, 32, 8}, {0, 1, 2, 3}, {0, 1, 3, 2}, 1},
      // Sides of fewer than 32 values grouped with the outer dimension that continues them:
      // BLAST's (L, B, r) -> (r, B, L) and (r, B, K) -> (K, B, r) at b = 3, in vector tiles
      // (B L = 192 values) and, at B L = 150, in single values (16-bit and float) or vectors
      // (double); both sides grouped at once, with partial tiles (single values). (BLAST's
      // transposes at b = 16 and 5 tokens above are grouped too.)
      {{1, 3, 64, 96}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 96, 64, 3}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 3, 50, 96}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{1, 96, 50, 3}, {0, 1, 2, 3}, {0, 3, 2, 1}},
      {{13, 17, 3, 4}, {1, 2, 0, 3}, {3, 0, 1, 2}},
      // Src rows of fewer values than a vector, packed one after another (vector tiles over
      // whole rows): Monarch's r <-> K swap at K = 4 and 3, and with r = 1024 cut into tiles.
      // (The 33 x 40 x 9 case above takes them too.)
      {{1, 40, 48, 4}, {0, 1, 2, 3}, {0, 1, 3, 2}},
      {{1, 40, 48, 3}, {0, 1, 2, 3}, {0, 1, 3, 2}},
      {{1, 6, 1024, 4}, {0, 1, 2, 3}, {0, 1, 3, 2}},
  };
  auto as_double = [](T x) {
    if constexpr (std::is_same_v<T, double>) {
      return x;
    } else {
      return double(float(x));
    }
  };
  // (Not numeric_limits: Eigen 3.4's epsilon() for half is 2^-13, not 2^-10.)
  double roundoff = 0;
  if constexpr (is_reduced_precision_v<T>) {
    roundoff = unit_roundoff_v<T>;
  } else {
    roundoff = double(ScalarTraits<T>::epsilon) / 2;
  }
  auto strides_of = [](const std::array<Index, 4>& dims, const std::array<int, 4>& order) {
    std::array<Index, 4> strides{};
    Index step = 1;
    for (int k = 3; k >= 0; --k) {
      strides[order[k]] = step;
      step *= dims[order[k]];
    }
    return strides;
  };
  for (const Case& cs : cases)
    for (bool scaled : {false, true}) {
      const Index total = cs.dims[0] * cs.dims[1] * cs.dims[2] * cs.dims[3];
      const Index src_values = total + cs.src_offset;
      const HostMatrix<T> src = random_matrix<float>(src_values, 1).cast<T>();
      const HostMatrix<T> old = random_matrix<float>(total, 1).cast<T>();
      const auto ss = strides_of(cs.dims, cs.src_order), ds = strides_of(cs.dims, cs.dst_order);
      HostMatrix<double> expected(total, 1);
      for (Index a = 0; a < cs.dims[0]; ++a)
        for (Index b = 0; b < cs.dims[1]; ++b)
          for (Index c = 0; c < cs.dims[2]; ++c)
            for (Index d = 0; d < cs.dims[3]; ++d) {
              const Index from = a * ss[0] + b * ss[1] + c * ss[2] + d * ss[3];
              const Index to = a * ds[0] + b * ds[1] + c * ds[2] + d * ds[3];
              const double v = as_double(src(cs.src_offset + from, 0));
              expected(to, 0) = scaled ? 0.5 * v - 2.0 * as_double(old(to, 0)) : v;
            }
      const DeviceMatrix<T> src_d = to_device(src);
      DeviceMatrix<T> dst_d = to_device(old);
      detail::StridedCopy copy{};
      copy.src = src_d.view().data + cs.src_offset;
      copy.dst = dst_d.view().data;
      for (int k = 0; k < 4; ++k) {
        copy.dims[k] = cs.dims[k];
        copy.src_strides[k] = ss[k];
        copy.dst_strides[k] = ds[k];
      }
      copy.scaled = scaled;
      copy.alpha = 0.5;
      copy.beta = -2.0;
      detail::strided_copy<T>(copy, default_context());
      const HostMatrix<T> got = dst_d.to_host();
      // Exact copies; scaled ones round once to T (16-bit ones after an fp32 sum): within a
      // unit of roundoff of the value.
      Index wrong = 0;
      for (Index i = 0; i < total; ++i)
        if (std::abs(as_double(got(i, 0)) - expected(i, 0)) >
            (scaled ? 1.01 * roundoff * std::abs(expected(i, 0)) : 0.0))
          ++wrong;
      BOOST_TEST_CONTEXT("dims " << cs.dims[0] << "x" << cs.dims[1] << "x" << cs.dims[2] << "x"
                                 << cs.dims[3] << (scaled ? ", scaled" : "")) {
        BOOST_TEST(wrong == 0);
      }
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(small_inner_products_match_a_loop, T, CopyTypes) {
  // small_inner_gemm (BLAST's coupling stage) against a double loop on the same values:
  // sizes k x n of each size class (4, 8, 16, 32) and uneven ones, m of several row blocks
  // with a tail, padded leading dimensions, op(B) = B and B^T, alpha = 0.5 and beta = -2,
  // on tensor cores where they apply and on CUDA cores. `pad`: 1 odd leading dimensions and
  // strides (one row at a time), 2 even ones (neighbouring rows in pairs; an odd m leaves
  // the last row alone), 8 multiples of 8 (16-bit values with 8 < max(k, n) <= 16 on tensor
  // cores).
  struct Case {
    Index m, k, n;
    bool trans_b;
    int pad;
  };
  const std::vector<Case> cases = {
      {1100, 16, 16, false, 2}, {1100, 16, 16, true, 1}, {1025, 16, 9, true, 2},
      {37, 3, 5, true, 1},      {601, 8, 8, false, 2},   {600, 9, 9, false, 1},
      {513, 32, 20, true, 2},   {70, 6, 2, false, 1},    {1, 1, 1, false, 2},
      {1100, 16, 16, false, 8}, {1024, 16, 16, true, 8}, {1025, 16, 9, true, 8},
      {300, 5, 3, true, 8},     {7, 12, 16, false, 8}};
  auto as_double = [](T x) {
    if constexpr (std::is_same_v<T, double>) {
      return x;
    } else {
      return double(float(x));
    }
  };
  for (const Case& cs : cases)
    for (bool tensor_cores : {true, false}) {
      auto padded = [&](Index size, Index odd_pad) {
        if (cs.pad == 8) return (size + 7) / 8 * 8 + 8;
        return cs.pad == 2 ? size + 2 + size % 2 : size + odd_pad;
      };
      const Index batch = 3, lda = padded(cs.m, 5), ldc = padded(cs.m, 2);
      const Index b_rows = cs.trans_b ? cs.n : cs.k, b_cols = cs.trans_b ? cs.k : cs.n;
      const Index ldb = b_rows + 1;
      const Index stride_a = padded(lda * cs.k, 7), stride_b = ldb * b_cols,
                  stride_c = padded(ldc * cs.n, 3);
      const HostMatrix<T> a = random_matrix<float>(stride_a * batch, 1).cast<T>();
      const HostMatrix<T> b = random_matrix<float>(stride_b * batch, 1).cast<T>();
      const HostMatrix<T> c0 = random_matrix<float>(stride_c * batch, 1).cast<T>();
      HostMatrix<double> expected(stride_c * batch, 1);
      for (Index i = 0; i < stride_c * batch; ++i)
        expected(i, 0) = as_double(c0(i, 0));
      double scale = 0;  // the largest |alpha A op(B)| + |beta C|, for the tolerance
      for (Index j = 0; j < batch; ++j)
        for (Index row = 0; row < cs.m; ++row)
          for (Index q = 0; q < cs.n; ++q) {
            double sum = 0, magnitude = 0;
            for (Index p = 0; p < cs.k; ++p) {
              const double bv =
                  as_double(b(j * stride_b + (cs.trans_b ? q + p * ldb : p + q * ldb), 0));
              sum += as_double(a(j * stride_a + row + p * lda, 0)) * bv;
              magnitude += std::abs(as_double(a(j * stride_a + row + p * lda, 0)) * bv);
            }
            double& out = expected(j * stride_c + row + q * ldc, 0);
            scale = std::max(scale, 0.5 * magnitude + 2 * std::abs(out));
            out = 0.5 * sum - 2.0 * out;
          }
      const DeviceMatrix<T> ad = to_device(a), bd = to_device(b);
      DeviceMatrix<T> cd = to_device(c0);
      detail::SmallInnerGemm g{};
      g.a = ad.view().data, g.b = bd.view().data, g.c = cd.view().data;
      g.m = cs.m, g.n = cs.n, g.k = cs.k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
      g.stride_a = stride_a, g.stride_b = stride_b, g.stride_c = stride_c;
      g.batch = batch, g.trans_b = cs.trans_b, g.alpha = 0.5, g.beta = -2.0;
      g.tensor_cores = tensor_cores;
      detail::small_inner_gemm<T>(g, default_context());
      const HostMatrix<T> got = cd.to_host();
      // Sums in fp32 (fp64 for double) rounded once to T; values outside the products (the
      // padding) unchanged.
      double roundoff = 0;
      if constexpr (is_reduced_precision_v<T>) {
        roundoff = unit_roundoff_v<T>;
      } else {
        roundoff = double(ScalarTraits<T>::epsilon) / 2;
      }
      const double compute_roundoff = std::is_same_v<T, double> ? 1.2e-16 : 6e-8;
      const double bound = scale * (1.01 * roundoff + double(cs.k + 2) * compute_roundoff);
      Index wrong = 0;
      for (Index i = 0; i < stride_c * batch; ++i)
        if (!(std::abs(as_double(got(i, 0)) - expected(i, 0)) <= bound)) ++wrong;
      BOOST_TEST_CONTEXT("m " << cs.m << ", k " << cs.k << ", n " << cs.n
                              << (cs.trans_b ? ", B^T" : "") << ", pad " << cs.pad
                              << (tensor_cores ? "" : ", CUDA cores")) {
        BOOST_TEST(wrong == 0);
      }
    }
  // Sizes over the limit are refused, not run.
  detail::SmallInnerGemm too_big{};
  too_big.m = 4, too_big.k = 33, too_big.n = 2, too_big.batch = 1;
  BOOST_CHECK_THROW(detail::small_inner_gemm<float>(too_big, default_context()), DeviceError);
}

BOOST_AUTO_TEST_CASE(decode_kernel_on_signals_not_aligned_to_16_bytes) {
  // The decode kernel loaded float activations as float4 where the plan's offsets and strides
  // allowed, without checking where X starts: a column block of a wider row-major matrix
  // (data one float past a 16-byte boundary) raised cudaErrorMisalignedAddress.
  std::mt19937 gen(7);
  const Index rows = 64, cols = 64, batch = 8;
  const auto M = Monarch<float>::random(rows, cols, 4, 4, 3, gen);
  const HostMatrix<float> wide = random_matrix<float>(cols, 12);
  const HostMatrix<float> x = wide.middleCols(1, batch);
  const HostMatrix<float> y0 = random_matrix<float>(rows, batch);
  HostMatrix<float> expected = y0;
  M.apply(Op::NoTrans, view(x), view(expected), 0.5f, -2.0f);

  const DeviceMatrix<float> wd = to_device(wide, Layout::RowMajor);
  const ConstView<float> xv = ConstView<float>(wd.view()).col_block(1, batch);
  BOOST_TEST_REQUIRE(reinterpret_cast<std::uintptr_t>(xv.data) % 16 != 0);
  DeviceMatrix<float> yd = to_device(y0, Layout::RowMajor);
  BOOST_TEST_REQUIRE(detail::blr_plan_takes(xv, yd.view()));
  detail::blr_plan_apply_device<float>(M, Op::NoTrans, xv, yd.view(), 0.5f, -2.0f,
                                       default_context(), detail::PlanPath::Decode);
  check_error_within(relative_error(yd.to_host(), expected), tolerance<float>(cols));
}

BOOST_AUTO_TEST_SUITE_END()
