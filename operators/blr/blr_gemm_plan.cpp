#include "operators/blr/blr_gemm_plan.hpp"

#include <algorithm>

namespace strop::detail {
namespace {

// X's input block i as the transposed GEMM operand X_i^T (B x in_size), entry e at block e.
struct SignalOperand {
  PlanOperand operand;
  bool trans = false;
};
SignalOperand input_blocks(const PlanSignals& s, Index in_size) {
  // RowMajor: X (in x B, row stride ld) is the column-major B x in matrix X^T.
  // ColMajor: X is column-major in x B; op T makes X_i^T.
  const bool row_major = s.layout == Layout::RowMajor;
  const Index block_step = row_major ? in_size * s.x_ld : in_size;
  return {PlanOperand{PlanArray::X, 0, s.x_ld, block_step}, !row_major};
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
    gemm.c = {PlanArray::Y, 0, s.y_ld, out_size * s.y_ld};
  } else {
    // Y_o (out_size x B) = G_o (out_size x width) W_o, W_o = (W_o^T)^T.
    gemm.m = out_size, gemm.n = s.batch;
    gemm.a = g;
    gemm.trans_a = g_is_transposed_form;
    gemm.b = w;
    gemm.trans_b = true;
    gemm.c = {PlanArray::Y, 0, s.y_ld, out_size};
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
  const SignalOperand x = input_blocks(s, in_size);
  first.batch = in_blocks;
  first.m = B, first.n = r, first.k = in_size;
  first.a = x.operand;
  first.trans_a = x.trans;
  first.b = transposed ? PlanOperand{PlanArray::Left, 0, h, h * r}
                       : PlanOperand{PlanArray::Right, 0, r, r * w};
  first.trans_b = !transposed;
  first.c = {PlanArray::Z1, 0, in_blocks * B, B};
  plan.steps.push_back(first);

  // Z2_t^T (B x out) = Z1_t^T (B x in) coupling_t^T, batched over t; coupling_t is the
  // column-major K x L matrix of the s_kl[t] (op T), or its transpose for A^T (op N).
  PlanGemm couple;
  couple.batch = r;
  couple.m = B, couple.n = out_blocks, couple.k = in_blocks;
  couple.a = {PlanArray::Z1, 0, B, in_blocks * B};
  couple.b = {PlanArray::Extra, 0, K, K * L};
  couple.trans_b = !transposed;
  couple.c = {PlanArray::Z2, 0, r * B, B};
  // b x b couplings per rank index over B tokens, streamed by our kernel for small grids.
  // Measured on an H100 (bf16, blr_bench rows blast_coupling_*, session 17): 1.35-10.7x
  // faster than cuBLAS's strided batch for b = 3, 6, 9 at 128-4096 tokens (cuBLAS spends
  // ~12 us on any such batch); for b = 16, 0.92-1.59x (ahead at 128 tokens, behind at 4096).
  // At 1024 tokens the tensor-core kernel was ahead on all seven b = 16 layers (session 49,
  // H100: 1.01-1.66x), and streaming them (through a persistent variant of that kernel) took
  // the BLAST plans 1-15 % less time replayed (session 50, H100), so 16-bit couplings up to
  // 16 x 16 stream up to 1024 tokens (4096 measured behind); the CUDA-core kernel, which takes
  // token counts off multiples of 8, took up to 1.3x cuBLAS's time at b = 16.
  couple.streamed = std::max(in_blocks, out_blocks) <= streamed_coupling_blocks(s.value_bytes, B);
  plan.steps.push_back(couple);

  // y_o = second_o Z2_o: U_k (column-major h x r) or, for A^T, V_l^T (V_l column-major).
  const PlanOperand z2{PlanArray::Z2, 0, B, r * B};
  const PlanOperand second = transposed ? PlanOperand{PlanArray::Right, 0, r, r * w}
                                        : PlanOperand{PlanArray::Left, 0, h, h * r};
  plan.steps.push_back(output_stage(s, out_blocks, out_size, r, z2, second, transposed));
  return plan;
}

BlrGemmPlan blast_folded_plan(const BlockGrid& grid, const PlanSignals& s, BlastFold fold) {
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(), r = grid.rank,
              B = s.batch;
  if (fold == BlastFold::Last) {
    // Z1 by blast_gemm_plan's first stage, then Y (m x B) = G (m x r L) Z1, Z1 as the
    // column-major B x r L matrix Z1^T (rows (t, l) of Z1 are B values apart).
    BlrGemmPlan plan = blast_gemm_plan(grid, Op::NoTrans, s);
    plan.steps.resize(1);
    plan.z2_size = 0;
    plan.steps.push_back(output_stage(s, 1, K * h, r * L, PlanOperand{PlanArray::Z1, 0, B, 0},
                                      PlanOperand{PlanArray::FoldLast, 0, K * h, 0}, false));
    return plan;
  }
  // Z2^T (B x K r) = X^T F^T over all of X, F column-major K r x n (op T); row (k, t) of Z2 is
  // Z2[k][t], as the last stage reads it.
  BlrGemmPlan plan;
  plan.z2_size = K * r * B;
  PlanGemm first;
  const SignalOperand x = input_blocks(s, grid.cols);
  first.batch = 1;
  first.m = B, first.n = K * r, first.k = grid.cols;
  first.a = x.operand;
  first.trans_a = x.trans;
  first.b = {PlanArray::FoldFirst, 0, K * r, 0};
  first.trans_b = true;
  first.c = {PlanArray::Z2, 0, B, 0};
  plan.steps.push_back(first);
  plan.steps.push_back(output_stage(s, K, h, r, PlanOperand{PlanArray::Z2, 0, B, r * B},
                                    PlanOperand{PlanArray::Left, 0, h, h * r}, false));
  return plan;
}

Index blast_plan_work(const BlockGrid& grid) {
  return grid.rank * (grid.rows + grid.cols);
}

Index blast_fold_work(const BlockGrid& grid, BlastFold fold) {
  const Index r = grid.rank;
  return fold == BlastFold::First ? grid.row_blocks * r * grid.cols + r * grid.rows
                                  : r * grid.cols + grid.col_blocks * r * grid.rows;
}

BlastFold blast_cheaper_fold(const BlockGrid& grid) {
  return blast_fold_work(grid, BlastFold::First) <= blast_fold_work(grid, BlastFold::Last)
             ? BlastFold::First
             : BlastFold::Last;
}

// Measured on an H100 (bf16, blr_bench rows blast_plan_folded against blast_plan_cublas, two
// runs, bench/NOTES-blr.md session 52), folded / three-stage time over the Table 3 layers:
// - work ratio 1.4-2.6 (GPT2-S, ViT-B, DiT-XL/2 fc1): 0.64-0.98 per call at 16-4096 tokens,
//   0.73-0.95 replayed: two launches instead of three;
// - 3.0 (DiT-XL/2 qkv): 0.82-0.94 per call and 0.75-0.78 replayed at 16-128 tokens, a tie
//   (0.99-1.03) from 1024;
// - 8.5 (Llama-3.2-1B qo): 0.81-0.96 at 16-128 tokens but 1.3-1.65 from 1024 (left out); its
//   other layers and Llama-7B's (ratios 4-8.5) 1.07-3.7 everywhere.
// The 16-bit rule only: float GEMMs pay the extra work in full.
bool blast_folds(const BlockGrid& grid, Op op, const PlanSignals& s) {
  if (op != Op::NoTrans || s.value_bytes != 2 || s.batch < kBlastFoldMinBatch) return false;
  const double work = double(blast_fold_work(grid, blast_cheaper_fold(grid)));
  return work <= kBlastFoldMaxWork * double(blast_plan_work(grid));
}

BlrGemmPlan monarch_gemm_plan(const BlockGrid& grid, Op op, const PlanSignals& s) {
  const bool transposed = op != Op::NoTrans;
  const auto [in_blocks, out_blocks, in_size, out_size] = grid.oriented(transposed);
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(),
              w = grid.block_width(), r = grid.rank, B = s.batch;
  BlrGemmPlan plan;
  plan.z1_size = out_blocks * r * in_blocks * B;  // Z1[o][t][i][b]

  // Per input block i: Z1_i^T (B x O r) = X_i^T F_i^T, F_i = [first_0i; ...; first_O-1,i]
  // (rows (o, t)); row (o, t) of Z1_i is Z1[o][t][i], so F_i's rows sit I B apart.
  // NoTrans: F_l is R's by-column copy for block column l (column-major K r x w: op T).
  // A^T: F_k^T = [L_k0 ... L_k,L-1], L's storage for block row k (column-major h x L r).
  PlanGemm first;
  const SignalOperand x = input_blocks(s, in_size);
  first.batch = in_blocks;
  first.m = B, first.n = out_blocks * r, first.k = in_size;
  first.a = x.operand;
  first.trans_a = x.trans;
  first.b = transposed ? PlanOperand{PlanArray::Left, 0, h, L * h * r}
                       : PlanOperand{PlanArray::Extra, 0, K * r, K * r * w};
  first.trans_b = !transposed;
  first.c = {PlanArray::Z1, 0, in_blocks * B, B};
  plan.steps.push_back(first);

  // y_o = G_o Z1_o, Z1_o (r I x B) with rows (t, i), G_o = [second_o,i] with columns in that
  // order. NoTrans: G_k is L by rank for block row k (column-major h x r L). A^T: G_l^T is R
  // by rank for block column l (column-major r K x w).
  const PlanOperand z1{PlanArray::Z1, 0, B, r * in_blocks * B};
  const PlanOperand g = transposed ? PlanOperand{PlanArray::RightByRank, 0, K * r, K * r * w}
                                   : PlanOperand{PlanArray::LeftByRank, 0, h, L * h * r};
  plan.steps.push_back(output_stage(s, out_blocks, out_size, in_blocks * r, z1, g, transposed));
  return plan;
}

namespace {

// The permutation from or to a (blocks, B, size) tensor of the signal-contiguous matrix V
// (column-major rows x B, leading dimension ld): element (c, b, i) is V's row c size + i.
PlanPermute blocks_of(PlanArray matrix, Index ld, Index blocks, Index batch, Index size,
                      PlanArray tensor, bool to_tensor) {
  const std::array<Index, 4> dims{1, blocks, batch, size};
  const std::array<Index, 4> in_matrix{0, size, ld, 1}, in_tensor{0, batch * size, size, 1};
  return to_tensor ? PlanPermute{matrix, tensor, dims, in_matrix, in_tensor}
                   : PlanPermute{tensor, matrix, dims, in_tensor, in_matrix};
}

// C[e]^T (n x m) = op(A[e]) ..., written directly in the row-major terms of bmm:
// out[e] (rows x cols, row-major) = in[e] (rows x inner, row-major) W[e]^T with W[e] given
// as a column-major operand whose op is W[e] (cols x inner).
PlanGemm bmm(Index batch, Index rows, Index cols, Index inner, PlanOperand in, PlanOperand w,
             bool trans_w, PlanOperand out) {
  // Column-major view: out^T (cols x rows) = W (cols x inner) in^T (inner x rows).
  PlanGemm g;
  g.batch = batch;
  g.m = cols, g.n = rows, g.k = inner;
  g.a = w;
  g.trans_a = trans_w;
  g.b = in;
  g.c = out;
  return g;
}

}  // namespace

BlrGemmPlan blast_unfused_plan(const BlockGrid& grid, const PlanSignals& s) {
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(),
              w = grid.block_width(), r = grid.rank, B = s.batch;
  BlrGemmPlan plan;
  plan.steps.reserve(8);  // (also keeps GCC 12 from a false -Wstringop-overflow)
  plan.z1_size = std::max({L * B * w, r * B * L, K * B * r});
  plan.z2_size = std::max({L * B * r, r * B * K, K * B * h});
  // X -> Xp (L, B, w) in Z1.
  plan.steps.push_back(blocks_of(PlanArray::X, s.x_ld, L, B, w, PlanArray::Z1, true));
  // Z[l] (B x r) = Xp[l] V_l^T, into Z2; V_l is column-major r x w (op N gives V_l).
  plan.steps.push_back(bmm(L, B, r, w, {PlanArray::Z1, 0, w, B * w},
                           {PlanArray::Right, 0, r, r * w}, false, {PlanArray::Z2, 0, r, B * r}));
  // (L, B, r) -> (r, B, L) into Z1.
  plan.steps.push_back(
      PlanPermute{PlanArray::Z2, PlanArray::Z1, {1, L, B, r}, {0, B * r, r, 1}, {0, 1, L, B * L}});
  // Z2p[t] (B x K) = Z1p[t] (B x L) S_t^T, S_t the column-major K x L coupling (op N).
  plan.steps.push_back(bmm(r, B, K, L, {PlanArray::Z1, 0, L, B * L},
                           {PlanArray::Extra, 0, K, K * L}, false, {PlanArray::Z2, 0, K, B * K}));
  // (r, B, K) -> (K, B, r) into Z1.
  plan.steps.push_back(
      PlanPermute{PlanArray::Z2, PlanArray::Z1, {1, r, B, K}, {0, B * K, K, 1}, {0, 1, r, B * r}});
  // Yp[k] (B x h) = Z[k] (B x r) U_k^T, U_k column-major h x r (op N), into Z2.
  plan.steps.push_back(bmm(K, B, h, r, {PlanArray::Z1, 0, r, B * r}, {PlanArray::Left, 0, h, h * r},
                           false, {PlanArray::Z2, 0, h, B * h}));
  // Yp (K, B, h) -> Y.
  plan.steps.push_back(blocks_of(PlanArray::Y, s.y_ld, K, B, h, PlanArray::Z2, false));
  return plan;
}

BlrGemmPlan monarch_unfused_plan(const BlockGrid& grid, const PlanSignals& s) {
  const Index K = grid.row_blocks, L = grid.col_blocks, h = grid.block_height(),
              w = grid.block_width(), r = grid.rank, B = s.batch;
  BlrGemmPlan plan;
  plan.steps.reserve(8);  // (also keeps GCC 12 from a false -Wstringop-overflow)
  plan.z1_size = std::max({L * B * w, L * B * K * r, K * B * h});
  plan.z2_size = L * B * r * K;
  plan.steps.push_back(blocks_of(PlanArray::X, s.x_ld, L, B, w, PlanArray::Z1, true));
  // Z[l] (B x r K) = Xp[l] Rpub[l]^T, Rpub[l] row-major (r K) x w = column-major w x (r K)
  // (op T gives Rpub[l]).
  plan.steps.push_back(bmm(L, B, r * K, w, {PlanArray::Z1, 0, w, B * w},
                           {PlanArray::Unfused, 0, w, K * r * w}, true,
                           {PlanArray::Z2, 0, r * K, B * r * K}));
  // (L, B, r, K) -> (L, B, K, r) into Z1, then -> (K, B, L, r) into Z2.
  plan.steps.push_back(PlanPermute{
      PlanArray::Z2, PlanArray::Z1, {L * B, r, K, 1}, {r * K, K, 1, 0}, {K * r, 1, r, 0}});
  plan.steps.push_back(PlanPermute{PlanArray::Z1,
                                   PlanArray::Z2,
                                   {L, B, K, r},
                                   {B * K * r, K * r, r, 1},
                                   {r, L * r, B * L * r, 1}});
  // Yp[k] (B x h) = U[k] (B x L r) G_k^T, G_k = L's block row k, column-major h x L r.
  plan.steps.push_back(bmm(K, B, h, L * r, {PlanArray::Z2, 0, L * r, B * L * r},
                           {PlanArray::Left, 0, h, L * h * r}, false,
                           {PlanArray::Z1, 0, h, B * h}));
  plan.steps.push_back(blocks_of(PlanArray::Y, s.y_ld, K, B, h, PlanArray::Z1, false));
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
std::vector<T> blast_fold_first(const Blast<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, w = g.block_width(), r = g.rank, Kr = K * r;
  const std::vector<T>& s = A.diagonal_values();  // s_kl[t] at (k L + l) r + t
  const std::vector<T>& v = A.right_values();     // V_l(t, j) at l r w + j r + t
  std::vector<T> out(static_cast<std::size_t>(Kr * g.cols));
  for (Index l = 0; l < L; ++l)
    for (Index j = 0; j < w; ++j)
      for (Index k = 0; k < K; ++k)
        for (Index t = 0; t < r; ++t)
          out[static_cast<std::size_t>((l * w + j) * Kr + k * r + t)] =
              s[static_cast<std::size_t>((k * L + l) * r + t)] *
              v[static_cast<std::size_t>(l * r * w + j * r + t)];
  return out;
}

template <class T>
std::vector<T> blast_fold_last(const Blast<T>& A) {
  const BlockGrid& g = A.grid();
  const Index K = g.row_blocks, L = g.col_blocks, h = g.block_height(), r = g.rank, m = g.rows;
  const std::vector<T>& s = A.diagonal_values();  // s_kl[t] at (k L + l) r + t
  const std::vector<T>& u = A.left_values();      // U_k(i, t) at k h r + t h + i
  std::vector<T> out(static_cast<std::size_t>(m * r * L));
  for (Index t = 0; t < r; ++t)
    for (Index l = 0; l < L; ++l)
      for (Index k = 0; k < K; ++k)
        for (Index i = 0; i < h; ++i)
          out[static_cast<std::size_t>((t * L + l) * m + k * h + i)] =
              u[static_cast<std::size_t>(k * h * r + t * h + i)] *
              s[static_cast<std::size_t>((k * L + l) * r + t)];
  return out;
}

namespace {
// Every block of one of Monarch's factors, value (i, j) of block (k, l) (block(k, l): rows x
// cols), moved to position(k, l, i, j) of an array of `size` values.
template <class T, class Block, class Position>
std::vector<T> monarch_relaid(const Monarch<T>& A, std::size_t size, Block block, Index rows,
                              Index cols, Position position) {
  std::vector<T> out(size);
  for (Index k = 0; k < A.grid().row_blocks; ++k)
    for (Index l = 0; l < A.grid().col_blocks; ++l) {
      const auto values = block(k, l);
      for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
          out[static_cast<std::size_t>(position(k, l, i, j))] = values(i, j);
    }
  return out;
}
// R_kl(t, j) moved to position(k, l, t, j).
template <class T, class Position>
std::vector<T> monarch_right_relaid(const Monarch<T>& A, Position position) {
  return monarch_relaid(
      A, A.right_values().size(), [&](Index k, Index l) { return A.right_block(k, l); },
      A.grid().rank, A.grid().block_width(), position);
}
}  // namespace

template <class T>
std::vector<T> monarch_right_by_column(const Monarch<T>& A) {
  const Index Kr = A.grid().row_blocks * A.grid().rank, w = A.grid().block_width(),
              r = A.grid().rank;
  return monarch_right_relaid(
      A, [&](Index k, Index l, Index t, Index j) { return (l * w + j) * Kr + k * r + t; });
}

template <class T>
std::vector<T> monarch_right_by_rank(const Monarch<T>& A) {
  const Index K = A.grid().row_blocks, Kr = K * A.grid().rank, w = A.grid().block_width();
  return monarch_right_relaid(
      A, [&](Index k, Index l, Index t, Index j) { return (l * w + j) * Kr + t * K + k; });
}

template <class T>
std::vector<T> monarch_left_by_rank(const Monarch<T>& A) {
  const Index L = A.grid().col_blocks, h = A.grid().block_height(), hrL = h * A.grid().rank * L;
  return monarch_relaid(
      A, A.left_values().size(), [&](Index k, Index l) { return A.left_block(k, l); }, h,
      A.grid().rank,
      [&](Index k, Index l, Index row, Index t) { return k * hrL + (t * L + l) * h + row; });
}

template <class T>
std::vector<T> monarch_right_unfused(const Monarch<T>& A) {
  const Index K = A.grid().row_blocks, w = A.grid().block_width(), Krw = K * A.grid().rank * w;
  return monarch_right_relaid(
      A, [&](Index k, Index l, Index t, Index j) { return l * Krw + (t * K + k) * w + j; });
}

#define STROP_INSTANTIATE(T)                                          \
  template std::vector<T> blast_coupling_by_rank(const Blast<T>&);    \
  template std::vector<T> blast_fold_first(const Blast<T>&);          \
  template std::vector<T> blast_fold_last(const Blast<T>&);           \
  template std::vector<T> monarch_right_by_column(const Monarch<T>&); \
  template std::vector<T> monarch_right_by_rank(const Monarch<T>&);   \
  template std::vector<T> monarch_left_by_rank(const Monarch<T>&);    \
  template std::vector<T> monarch_right_unfused(const Monarch<T>&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
