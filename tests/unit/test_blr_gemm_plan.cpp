// The permutation-free GEMM plans of BLAST and Monarch (operators/blr/blr_gemm_plan.hpp),
// executed here by a naive column-major batched GEMM with cuBLAS's semantics, against the
// operators' own CPU application: every grid shape, both ops, both layouts, padded leading
// dimensions, alpha and beta. The GPU runs the same plans with cuBLAS.
#include <algorithm>
#include <array>
#include <random>
#include <variant>
#include <vector>

#include "operators/blr/blr_gemm_plan.hpp"
#include "reference.hpp"

namespace {

using namespace strop;
using namespace strop::testing;
using detail::BlrGemmPlan;
using detail::PlanArray;
using detail::PlanGemm;
using detail::PlanOperand;
using detail::PlanPermute;

// The start of batch entry e of an operand.
Index entry_offset(const PlanOperand& p, Index e) {
  return p.offset + e * p.stride;
}

// What cublasGemm(Strided)Batched computes, in double, on arrays indexed by PlanArray.
void run_gemm(const PlanGemm& g, std::array<std::vector<double>, detail::kPlanArrays>& arrays,
              double alpha, double beta) {
  // cuBLAS's argument checks: each leading dimension covers the stored rows.
  BOOST_TEST(g.a.ld >= std::max<Index>(1, g.trans_a ? g.k : g.m));
  BOOST_TEST(g.b.ld >= std::max<Index>(1, g.trans_b ? g.n : g.k));
  BOOST_TEST(g.c.ld >= std::max<Index>(1, g.m));
  const auto& A = arrays[static_cast<int>(g.a.array)];
  const auto& B = arrays[static_cast<int>(g.b.array)];
  auto& C = arrays[static_cast<int>(g.c.array)];
  const bool to_y = g.c.array == PlanArray::Y;
  for (Index e = 0; e < g.batch; ++e) {
    const Index a0 = entry_offset(g.a, e), b0 = entry_offset(g.b, e), c0 = entry_offset(g.c, e);
    for (Index i = 0; i < g.m; ++i)
      for (Index j = 0; j < g.n; ++j) {
        double acc = 0;
        for (Index p = 0; p < g.k; ++p) {
          const Index ai = g.trans_a ? a0 + p + i * g.a.ld : a0 + i + p * g.a.ld;
          const Index bi = g.trans_b ? b0 + j + p * g.b.ld : b0 + p + j * g.b.ld;
          acc += A.at(static_cast<std::size_t>(ai)) * B.at(static_cast<std::size_t>(bi));
        }
        double& c = C.at(static_cast<std::size_t>(c0 + i + j * g.c.ld));
        c = to_y ? alpha * acc + (beta == 0 ? 0.0 : beta * c) : acc;
      }
  }
}

// The 4-D strided copy of the unfused baselines.
void run_permute(const PlanPermute& p, std::array<std::vector<double>, detail::kPlanArrays>& arrays,
                 double alpha, double beta) {
  const auto& src = arrays[static_cast<int>(p.src)];
  auto& dst = arrays[static_cast<int>(p.dst)];
  const bool to_y = p.dst == PlanArray::Y;
  for (Index i0 = 0; i0 < p.dims[0]; ++i0)
    for (Index i1 = 0; i1 < p.dims[1]; ++i1)
      for (Index i2 = 0; i2 < p.dims[2]; ++i2)
        for (Index i3 = 0; i3 < p.dims[3]; ++i3) {
          const Index si = i0 * p.src_strides[0] + i1 * p.src_strides[1] + i2 * p.src_strides[2] +
                           i3 * p.src_strides[3];
          const Index di = i0 * p.dst_strides[0] + i1 * p.dst_strides[1] + i2 * p.dst_strides[2] +
                           i3 * p.dst_strides[3];
          const double v = src.at(static_cast<std::size_t>(si));
          double& d = dst.at(static_cast<std::size_t>(di));
          d = to_y ? alpha * v + (beta == 0 ? 0.0 : beta * d) : v;
        }
}

// The plan's steps in order.
void run_plan(const BlrGemmPlan& plan, std::array<std::vector<double>, detail::kPlanArrays>& arrays,
              double alpha, double beta) {
  auto& z1 = arrays[static_cast<int>(PlanArray::Z1)];
  auto& z2 = arrays[static_cast<int>(PlanArray::Z2)];
  // NaN-filled workspaces: a stage that reads what no earlier stage wrote shows.
  z1.assign(static_cast<std::size_t>(plan.z1_size), std::numeric_limits<double>::quiet_NaN());
  z2.assign(static_cast<std::size_t>(plan.z2_size), std::numeric_limits<double>::quiet_NaN());
  for (const detail::PlanStep& step : plan.steps) {
    if (const auto* g = std::get_if<PlanGemm>(&step)) {
      run_gemm(*g, arrays, alpha, beta);
    } else {
      run_permute(std::get<PlanPermute>(step), arrays, alpha, beta);
    }
  }
}

// Y = alpha op(A) X + beta Y through the plan, against the operator's CPU path; the signals
// in `layout` with `pad` unused values after each signal (ColMajor) or feature (RowMajor).
// The operator's re-laid value arrays a plan may read (Extra, Unfused, LeftByRank, ...).
using Relaid = std::vector<std::pair<PlanArray, std::vector<double>>>;
Relaid relaid(const Blast<double>& A) {
  return {{PlanArray::Extra, detail::blast_coupling_by_rank(A)},
          {PlanArray::FoldFirst, detail::blast_fold_first(A)},
          {PlanArray::FoldLast, detail::blast_fold_last(A)}};
}
Relaid relaid(const Monarch<double>& A) {
  return {{PlanArray::Extra, detail::monarch_right_by_column(A)},
          {PlanArray::LeftByRank, detail::monarch_left_by_rank(A)},
          {PlanArray::RightByRank, detail::monarch_right_by_rank(A)}};
}

template <class Operator, class MakePlan>
void check_plan(const Operator& A, MakePlan make_plan, const Relaid& more, Op op, Layout layout,
                Index batch, Index pad) {
  const Index in = op == Op::NoTrans ? A.cols() : A.rows();
  const Index out = op == Op::NoTrans ? A.rows() : A.cols();
  const HostMatrix<double> x = random_matrix<double>(in, batch);
  const HostMatrix<double> y0 = random_matrix<double>(out, batch);
  HostMatrix<double> expected = y0;
  A.apply(op, view(x), view(expected), 0.5, -2.0);

  const bool row_major = layout == Layout::RowMajor;
  const Index x_ld = (row_major ? batch : in) + pad, y_ld = (row_major ? batch : out) + pad;
  std::array<std::vector<double>, detail::kPlanArrays> arrays;
  auto& xa = arrays[static_cast<int>(PlanArray::X)];
  auto& ya = arrays[static_cast<int>(PlanArray::Y)];
  xa.assign(static_cast<std::size_t>(x_ld * (row_major ? in : batch)), 0.0);
  ya.assign(static_cast<std::size_t>(y_ld * (row_major ? out : batch)), 0.0);
  auto at = [&](Index row, Index col, Index ld) {
    return row_major ? row * ld + col : row + col * ld;
  };
  for (Index b = 0; b < batch; ++b) {
    for (Index i = 0; i < in; ++i)
      xa[static_cast<std::size_t>(at(i, b, x_ld))] = x(i, b);
    for (Index o = 0; o < out; ++o)
      ya[static_cast<std::size_t>(at(o, b, y_ld))] = y0(o, b);
  }
  arrays[static_cast<int>(PlanArray::Left)] = A.left_values();
  arrays[static_cast<int>(PlanArray::Right)] = A.right_values();
  for (const auto& [array, values] : more)
    arrays[static_cast<int>(array)] = values;

  const BlrGemmPlan plan = make_plan(A.grid(), op, detail::PlanSignals{layout, batch, x_ld, y_ld});
  run_plan(plan, arrays, 0.5, -2.0);
  HostMatrix<double> got(out, batch);
  for (Index b = 0; b < batch; ++b)
    for (Index o = 0; o < out; ++o)
      got(o, b) = ya[static_cast<std::size_t>(at(o, b, y_ld))];
  BOOST_TEST(relative_error(got, expected) <= 1e-13);
}

struct Shape {
  Index rows, cols, row_blocks, col_blocks, rank;
};
const Shape kShapes[] = {
    {12, 12, 3, 3, 2},  // square
    {12, 12, 4, 2, 3},  // square matrix, rectangular grid
    {12, 10, 3, 5, 1},  // rectangular, rank 1
    {6, 15, 2, 3, 4},   // wide, rank above the block size
    {9, 8, 1, 1, 3},    // one block
    {8, 9, 1, 3, 2},    // one block row
};

// check_plan for every shape, op (`ops`), layout and B in {1, 5} (padding 3).
template <class Operator, class MakePlan>
void check_every_case(MakePlan make_plan, std::vector<Op> ops = {Op::NoTrans, Op::Trans}) {
  std::mt19937 rng(3);
  for (const Shape& s : kShapes)
    for (Op op : ops)
      for (Layout layout : {Layout::ColMajor, Layout::RowMajor})
        for (Index batch : {1, 5})
          BOOST_TEST_CONTEXT(Operator::type_name << " " << s.rows << "x" << s.cols << " grid "
                                                 << s.row_blocks << "x" << s.col_blocks << " rank "
                                                 << s.rank << ", " << to_string(op) << ", "
                                                 << to_string(layout) << ", B = " << batch) {
            const auto A =
                Operator::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, rng);
            check_plan(A, make_plan, relaid(A), op, layout, batch, 3);
          }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(blr_gemm_plan)

BOOST_AUTO_TEST_CASE(blast_plan_matches_the_operator) {
  check_every_case<Blast<double>>(detail::blast_gemm_plan);
}

BOOST_AUTO_TEST_CASE(blast_streams_the_couplings_of_small_grids_only) {
  // The coupling stage (the only product with n, k = the grid's block counts) goes to the
  // streamed kernel up to 16 blocks a side for 16-bit signals of 8 k <= 1024 tokens and 12
  // for others, to cuBLAS beyond; the other stages and the unfused baseline always to cuBLAS.
  for (int value_bytes : {2, 4, 8})
    for (Index tokens : {64, 1024, 37, 2048})
      for (Index b : {3, 12, 13, 16, 24})
        for (Op op : {Op::NoTrans, Op::Trans}) {
          const detail::PlanSignals sig{Layout::ColMajor, tokens, 624, 624, value_bytes};
          const BlockGrid grid{624, 624, b, b == 16 ? 4 : b, 8};  // 624 = 3 16 13
          const detail::BlrGemmPlan plan = detail::blast_gemm_plan(grid, op, sig);
          BOOST_REQUIRE(plan.steps.size() == 3);
          const Index most = value_bytes == 2 && (tokens == 64 || tokens == 1024) ? 16 : 12;
          const bool small = std::max(grid.row_blocks, grid.col_blocks) <= most;
          BOOST_TEST_CONTEXT("grid " << grid.row_blocks << "x" << grid.col_blocks << ", "
                                     << to_string(op) << ", " << value_bytes << "-byte values, "
                                     << tokens << " tokens") {
            BOOST_TEST(std::get<detail::PlanGemm>(plan.steps[1]).streamed == small);
            BOOST_TEST(!std::get<detail::PlanGemm>(plan.steps[0]).streamed);
            BOOST_TEST(!std::get<detail::PlanGemm>(plan.steps[2]).streamed);
          }
        }
  for (const detail::PlanStep& step :
       detail::blast_unfused_plan(BlockGrid{96, 96, 4, 4, 8},
                                  detail::PlanSignals{Layout::ColMajor, 64, 96, 96})
           .steps)
    if (const auto* g = std::get_if<detail::PlanGemm>(&step)) BOOST_TEST(!g->streamed);
}

BOOST_AUTO_TEST_CASE(blast_folded_plans_match_the_operator) {
  // Both folds of the couplings into a side's factors, on every shape (A only).
  for (detail::BlastFold fold : {detail::BlastFold::First, detail::BlastFold::Last})
    BOOST_TEST_CONTEXT((fold == detail::BlastFold::First ? "first" : "last") << " fold") {
      check_every_case<Blast<double>>(
          [fold](const BlockGrid& grid, Op, const detail::PlanSignals& s) {
            const detail::BlrGemmPlan plan = detail::blast_folded_plan(grid, s, fold);
            BOOST_TEST(plan.steps.size() == 2);  // no coupling stage
            return plan;
          },
          {Op::NoTrans});
    }
}

BOOST_AUTO_TEST_CASE(blast_folds_where_the_extra_work_is_small) {
  // GPT2-S c_attn (768 -> 2304, 6 x 6 blocks, rank 192): the first fold costs 2.25x the
  // three-stage plan's GEMM work; c_proj (3072 -> 768): the last fold 2x; Llama-3.2-1B qo
  // (2048, 16 x 16, rank 256): 8.5x (kBlastFoldMaxWork = 3).
  const BlockGrid c_attn{2304, 768, 6, 6, 192}, c_proj{768, 3072, 6, 6, 192},
      llama{2048, 2048, 16, 16, 256};
  BOOST_TEST((detail::blast_cheaper_fold(c_attn) == detail::BlastFold::First));
  BOOST_TEST((detail::blast_cheaper_fold(c_proj) == detail::BlastFold::Last));
  BOOST_TEST(detail::blast_plan_work(c_attn) == 192 * (2304 + 768));
  BOOST_TEST(detail::blast_fold_work(c_attn, detail::BlastFold::First) ==
             6 * 192 * 768 + 192 * 2304);
  BOOST_TEST(detail::blast_fold_work(c_proj, detail::BlastFold::Last) ==
             192 * 3072 + 6 * 192 * 768);
  auto folds = [](const BlockGrid& g, Op op, Index batch, int value_bytes) {
    return detail::blast_folds(
        g, op, detail::PlanSignals{Layout::ColMajor, batch, g.cols, g.rows, value_bytes});
  };
  BOOST_TEST(folds(c_attn, Op::NoTrans, 1024, 2));
  BOOST_TEST(folds(c_proj, Op::NoTrans, 128, 2));
  BOOST_TEST(!folds(c_attn, Op::NoTrans, 15, 2));    // few tokens: the weights' bytes count
  BOOST_TEST(!folds(c_attn, Op::Trans, 1024, 2));    // A^T keeps three stages
  BOOST_TEST(!folds(c_attn, Op::NoTrans, 1024, 4));  // float: the extra work is not cheap
  BOOST_TEST(!folds(llama, Op::NoTrans, 1024, 2));
  // DiT-XL/2 qkv (1152 -> 3456, 9 x 9, rank 384): exactly 3x, folded.
  const BlockGrid dit_qkv{3456, 1152, 9, 9, 384};
  BOOST_TEST(detail::blast_fold_work(dit_qkv, detail::blast_cheaper_fold(dit_qkv)) ==
             3 * detail::blast_plan_work(dit_qkv));
  BOOST_TEST(folds(dit_qkv, Op::NoTrans, 16, 2));
}

BOOST_AUTO_TEST_CASE(monarch_plan_matches_the_operator) {
  check_every_case<Monarch<double>>(detail::monarch_gemm_plan);
}

BOOST_AUTO_TEST_CASE(unfused_baselines_match_the_operators) {
  // Signal-contiguous X and Y (the only layout the baselines take), padded, B = 1 and 5.
  std::mt19937 rng(6);
  for (const Shape& s : kShapes)
    for (Index batch : {1, 5})
      BOOST_TEST_CONTEXT(s.rows << "x" << s.cols << " grid " << s.row_blocks << "x" << s.col_blocks
                                << " rank " << s.rank << ", B = " << batch) {
        const auto B =
            Blast<double>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, rng);
        check_plan(
            B,
            [](const BlockGrid& g, Op, const auto& sig) {
              return detail::blast_unfused_plan(g, sig);
            },
            relaid(B), Op::NoTrans, Layout::ColMajor, batch, 3);
        const auto M =
            Monarch<double>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, rng);
        check_plan(
            M,
            [](const BlockGrid& g, Op, const auto& sig) {
              return detail::monarch_unfused_plan(g, sig);
            },
            {{PlanArray::Unfused, detail::monarch_right_unfused(M)}}, Op::NoTrans, Layout::ColMajor,
            batch, 3);
      }
}

BOOST_AUTO_TEST_CASE(lowrank_is_a_one_block_monarch) {
  // The GPU runs LowRank by the Monarch plan of a 1 x 1 grid with L_00 = left, R_00 = right
  // (both column-major), and every re-laid copy the same as those (blr_gemm_cuda.cpp).
  std::mt19937 rng(5);
  const auto A = LowRank<double>::random(9, 7, 3, rng);
  const std::vector<double> left(A.left().data(), A.left().data() + A.left().size());
  const std::vector<double> right(A.right().data(), A.right().data() + A.right().size());
  const Monarch<double> M(9, 7, 1, 1, 3, left, right);
  BOOST_TEST(relative_error(M.to_dense(), A.to_dense()) <= 1e-15);
  BOOST_TEST(detail::monarch_right_by_column(M) == right);
  BOOST_TEST(detail::monarch_right_by_rank(M) == right);
  BOOST_TEST(detail::monarch_left_by_rank(M) == left);
  for (Op op : {Op::NoTrans, Op::Trans})
    check_plan(
        M, detail::monarch_gemm_plan,
        {{PlanArray::Extra, right}, {PlanArray::LeftByRank, left}, {PlanArray::RightByRank, right}},
        op, Layout::RowMajor, 4, 2);
}

BOOST_AUTO_TEST_SUITE_END()

// apply_reduced_precision on host signals: the float result rounded once to 16 bits; bad
// shapes and overlapping views refused (ShapeError) before anything is written.
BOOST_AUTO_TEST_SUITE(blr_reduced_precision)

BOOST_AUTO_TEST_CASE(host_signals_round_the_float_result) {
  std::mt19937 rng(8);
  const auto B = Blast<float>::random(12, 10, 3, 5, 2, rng);
  const auto M = Monarch<float>::random(12, 10, 3, 5, 2, rng);
  const auto L = LowRank<float>::random(12, 10, 3, rng);
  auto check = [&](const auto& A, const char* name) {
    const HostMatrix<half> xh = random_matrix<float>(10, 6).cast<half>();
    const HostMatrix<half> y0 = random_matrix<float>(12, 6).cast<half>();
    HostMatrix<float> expected = y0.cast<float>();
    A.apply(Op::NoTrans, view(HostMatrix<float>(xh.cast<float>())), view(expected), 0.5f, -2.0f);
    HostMatrix<half> yh = y0;
    apply_reduced_precision(A, Op::NoTrans, view(xh), view(yh), 0.5f, -2.0f);
    BOOST_TEST_CONTEXT(name) {
      // One rounding to half of each output.
      BOOST_TEST(relative_error(HostMatrix<float>(yh.cast<float>()), expected) <=
                 unit_roundoff_v<half>);
      HostMatrix<half> wrong(11, 6);
      BOOST_CHECK_THROW(apply_reduced_precision(A, Op::NoTrans, view(xh), view(wrong)), ShapeError);
      BOOST_CHECK_THROW(apply_reduced_precision(A, Op::Trans, view(xh), view(yh)), ShapeError);
    }
  };
  check(B, "blast");
  check(M, "monarch");
  check(L, "lowrank");
}

BOOST_AUTO_TEST_SUITE_END()
