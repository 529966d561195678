#include "operators/blr/blr_gemm_plan.hpp"

namespace strop::detail {
namespace {

// X's input block i as the transposed GEMM operand X_i^T (B x in_size), entry e at block
// e (one-level) or e / inner (two-level, the same block for every inner entry).
struct SignalOperand {
  PlanOperand operand;
  bool trans = false;
};
SignalOperand input_blocks(const PlanSignals& s, Index in_size, bool two_level) {
  // RowMajor: X (in x B, row stride ld) is the column-major B x in matrix X^T.
  // ColMajor: X is column-major in x B; op T makes X_i^T.
  const bool row_major = s.layout == Layout::RowMajor;
  const Index block_step = row_major ? in_size * s.x_ld : in_size;
  PlanOperand x{PlanArray::X, 0, s.x_ld, two_level ? 0 : block_step, two_level ? block_step : 0};
  return {x, !row_major};
}

// The last stage: Y's output block o (out_size x B) = G_o (out_size x width) W_o, with W_o
// stored as the column-major B x width matrix W_o^T, and G_o given as the GEMM operand
// `g` whose op(g) is G_o^T (trans_g) when the output is written as Y_o^T.
PlanGemm output_stage(const PlanSignals& s, Index out_blocks, Index out_size, Index width,
                      PlanOperand w, PlanOperand g, bool g_is_transposed_form) {
  PlanGemm gemm;
  gemm.batch = out_blocks;
  gemm.k = width;
  if (s.layout == Layout::RowMajor) {
    // Y_o^T (B x out_size) = W_o^T (B x width) G_o^T.
    gemm.m = s.batch, gemm.n = out_size;
    gemm.a = w;
    gemm.b = g;
    gemm.trans_b = !g_is_transposed_form;
    gemm.c = {PlanArray::Y, 0, s.y_ld, out_size * s.y_ld, 0};
  } else {
    // Y_o (out_size x B) = G_o (out_size x width) W_o, W_o = (W_o^T)^T.
    gemm.m = out_size, gemm.n = s.batch;
    gemm.a = g;
    gemm.trans_a = g_is_transposed_form;
    gemm.b = w;
    gemm.trans_b = true;
    gemm.c = {PlanArray::Y, 0, s.y_ld, out_size, 0};
  }
  return gemm;
}

}  // namespace

BlrGemmPlan blast_gemm_plan(const BlockGrid& grid, Op op, const PlanSignals& s) {
  const bool transposed = op != Op::NoTrans;
  const auto [in_blocks, out_blocks, in_size, out_size] = grid.oriented(transposed);
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(),
              w = grid.block_width(), r = grid.rank, B = s.batch;
  BlrGemmPlan plan;
  plan.z1_size = r * in_blocks * B;   // Z1[t][i][b]
  plan.z2_size = out_blocks * r * B;  // Z2[o][t][b]

  // Z1_i^T (B x r) = X_i^T first_i^T. first_i^T is V_l^T (V_l column-major r x w: op T) or,
  // for A^T, U_k (column-major h x r).
  PlanGemm first;
  const SignalOperand x = input_blocks(s, in_size, false);
  first.batch = in_blocks;
  first.m = B, first.n = r, first.k = in_size;
  first.a = x.operand;
  first.trans_a = x.trans;
  first.b = transposed ? PlanOperand{PlanArray::Left, 0, h, h * r, 0}
                       : PlanOperand{PlanArray::Right, 0, r, r * w, 0};
  first.trans_b = !transposed;
  first.c = {PlanArray::Z1, 0, in_blocks * B, B, 0};
  plan.gemms.push_back(first);

  // Z2_t^T (B x out) = Z1_t^T (B x in) coupling_t^T, batched over t; coupling_t is the
  // column-major K x L matrix of the s_kl[t] (op T), or its transpose for A^T (op N).
  PlanGemm couple;
  couple.batch = r;
  couple.m = B, couple.n = out_blocks, couple.k = in_blocks;
  couple.a = {PlanArray::Z1, 0, B, in_blocks * B, 0};
  couple.b = {PlanArray::Extra, 0, K, K * L, 0};
  couple.trans_b = !transposed;
  couple.c = {PlanArray::Z2, 0, r * B, B, 0};
  plan.gemms.push_back(couple);

  // y_o = second_o Z2_o: U_k (column-major h x r) or, for A^T, V_l^T (V_l column-major).
  const PlanOperand z2{PlanArray::Z2, 0, B, r * B, 0};
  const PlanOperand second = transposed ? PlanOperand{PlanArray::Right, 0, r, r * w, 0}
                                        : PlanOperand{PlanArray::Left, 0, h, h * r, 0};
  plan.gemms.push_back(output_stage(s, out_blocks, out_size, r, z2, second, transposed));
  return plan;
}

BlrGemmPlan monarch_gemm_plan(const BlockGrid& grid, Op op, const PlanSignals& s) {
  const bool transposed = op != Op::NoTrans;
  const auto [in_blocks, out_blocks, in_size, out_size] = grid.oriented(transposed);
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(),
              w = grid.block_width(), r = grid.rank, B = s.batch;
  BlrGemmPlan plan;
  plan.z1_size = out_blocks * in_blocks * r * B;  // Z1[o][i][t][b]

  // Pairs (i, o), i outer: Z1_oi^T (B x r) = X_i^T first_oi^T. NoTrans: first = R_kl
  // (o = k, i = l; column-major r x w at (k L + l) r w: op T). A^T: first_oi^T = L_kl
  // (i = k, o = l; column-major h x r at (k L + l) h r: op N).
  PlanGemm first;
  const SignalOperand x = input_blocks(s, in_size, true);
  first.batch = in_blocks * out_blocks;
  first.inner = out_blocks;
  first.m = B, first.n = r, first.k = in_size;
  first.a = x.operand;
  first.trans_a = x.trans;
  first.b = transposed ? PlanOperand{PlanArray::Left, 0, h, h * r, L * h * r}
                       : PlanOperand{PlanArray::Right, 0, r, L * r * w, r * w};
  first.trans_b = !transposed;
  first.c = {PlanArray::Z1, 0, B, in_blocks * r * B, r * B};
  // One block row or column: a one-level batch (a strided GEMM, no pointer arrays).
  if (out_blocks == 1 || in_blocks == 1) {
    for (PlanOperand* p : {&first.a, &first.b, &first.c})
      if (out_blocks == 1) p->stride = p->outer_stride;
    first.inner = 0;
  }
  plan.gemms.push_back(first);

  // y_o = G_o Z1_o, G_o = [second_o0 ... second_o,I-1] (out_size x I r). NoTrans: G_k is
  // L's storage for block row k (column-major h x L r). A^T: G_l^T is the by-column copy of
  // R for block column l (column-major K r x w).
  const PlanOperand z1{PlanArray::Z1, 0, B, in_blocks * r * B, 0};
  const PlanOperand g = transposed ? PlanOperand{PlanArray::Extra, 0, K * r, K * r * w, 0}
                                   : PlanOperand{PlanArray::Left, 0, h, L * h * r, 0};
  plan.gemms.push_back(output_stage(s, out_blocks, out_size, in_blocks * r, z1, g, transposed));
  return plan;
}

template <class T>
std::vector<T> blast_coupling_by_rank(const Blast<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, r = g.rank;
  const std::vector<T>& s = A.diagonal_values();  // s_kl[t] at (k L + l) r + t
  std::vector<T> out(s.size());
  for (Index k = 0; k < K; ++k)
    for (Index l = 0; l < L; ++l)
      for (Index t = 0; t < r; ++t)
        out[static_cast<std::size_t>((t * L + l) * K + k)] =
            s[static_cast<std::size_t>((k * L + l) * r + t)];
  return out;
}

template <class T>
std::vector<T> monarch_right_by_column(const Monarch<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, r = g.rank, w = g.block_width();
  std::vector<T> out(A.right_values().size());
  for (Index k = 0; k < K; ++k)
    for (Index l = 0; l < L; ++l) {
      const auto R = A.right_block(k, l);
      for (Index j = 0; j < w; ++j)
        for (Index t = 0; t < r; ++t)
          out[static_cast<std::size_t>((l * w + j) * K * r + k * r + t)] = R(t, j);
    }
  return out;
}

#define STROP_INSTANTIATE(T)                                       \
  template std::vector<T> blast_coupling_by_rank(const Blast<T>&); \
  template std::vector<T> monarch_right_by_column(const Monarch<T>&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
