#pragma once
// Internal: BLAST and Monarch as a few batched GEMMs with no permutation pass (issue #9; the
// BLR paper's designs (5) for BLAST and (1)+(2) for Monarch, papers/NOTES.md paper 004).
//
// A plan is a list of batched GEMMs in cuBLAS's column-major terms, over named arrays (the
// signals, two workspaces, the operator's values in fixed layouts). The intermediates keep
// the batch index contiguous ("n contiguous" in the paper), so every stage reads and writes
// whole rows of B values and each permutation of the block structure becomes a choice of
// strides:
//
//   BLAST  (A = [U_k diag(s_kl) V_l]):  Z1[t][i][b] = (first_i x_i)[t]             batched over i
//                                       Z2[o][t][b] = sum_i coupling_t(o, i) Z1[t][i][b]  over t
//                                       y_o = second_o Z2[o]                        over o
//   Monarch (A = [L_kl R_kl]):          Z1[o][t][i][b] = (first_oi x_i)[t]          over i
//                                       y_o = second_o Z1[o]                        over o
//
// (i: input blocks, o: output blocks, t: rank index; for A^T the roles of the factors swap.)
// Monarch's first stage is one product per input block: the first factors of all output
// blocks stacked, [first_0i; ...; first_O-1,i] x_i, whose rows (o, t) go to Z1 with a
// single row stride (I B) because the rank index lies between o and i in Z1. The second
// stage then reads Z1[o] with its inner index (t, i), i fastest, so its factor's columns are
// laid out in that order (LeftByRank, RightByRank). The plans are checked against the operators on
// the CPU by executing them with a naive GEMM (tests/unit/test_blr_gemm_plan.cpp); the GPU runs
// them with cuBLAS (blr_gemm_cuda.cpp).
#include <array>
#include <variant>
#include <vector>

#include "strop/core/op.hpp"
#include "strop/core/scalar.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/blast.hpp"
#include "strop/operators/monarch.hpp"

namespace strop::detail {

// The arrays a plan reads and writes. Left, Right: the operator's own value arrays (BLAST:
// U_k, V_l; Monarch: L_kl, R_kl; see their headers). Extra: BLAST's s_kl by rank index
// (blast_coupling_by_rank) or Monarch's R_kl by block column (monarch_right_by_column).
// Unfused: Monarch's R_kl in the public code's layout (monarch_right_unfused), for the
// unfused baseline. LeftByRank, RightByRank: Monarch's second-stage factors with the rank
// index outer (monarch_left_by_rank for A, monarch_right_by_rank for A^T). Z1, Z2:
// workspaces. FoldFirst, FoldLast: BLAST's couplings folded into its first or last factors
// (blast_fold_first, blast_fold_last) for the folded plans.
enum class PlanArray {
  X,
  Y,
  Z1,
  Z2,
  Left,
  Right,
  Extra,
  Unfused,
  LeftByRank,
  RightByRank,
  FoldFirst,
  FoldLast
};
inline constexpr int kPlanArrays = 12;

// Entry e of a batch starts at offset + e * stride.
struct PlanOperand {
  PlanArray array = PlanArray::X;
  Index offset = 0, ld = 1, stride = 0;
};

// The largest BLAST block grid (b x b) whose coupling stage the plan streams (see
// blast_gemm_plan): 16 x 16 for 16-bit signals of at most 1024 tokens in a multiple of 8 (the
// tensor-core kernel's rows in whole 16-byte pieces), 12 x 12 otherwise.
inline constexpr Index kStreamedCouplingBlocks = 12;
inline constexpr Index kStreamedCouplingBlocks16 = 16;
constexpr Index streamed_coupling_blocks(int value_bytes, Index batch) {
  return value_bytes == 2 && batch % 8 == 0 && batch <= 1024 ? kStreamedCouplingBlocks16
                                                             : kStreamedCouplingBlocks;
}

// C_e = op(A_e) op(B_e) (m x n, inner dimension k), column-major with leading dimensions;
// when C is Y, C_e = alpha op(A_e) op(B_e) + beta C_e. `streamed`: run by strop's own
// small-inner kernel (small_inner_gemm: A not transposed, n and k <= 32) instead of cuBLAS;
// the value is the same, only the GPU's route differs.
struct PlanGemm {
  bool trans_a = false, trans_b = false;
  Index m = 0, n = 0, k = 0;
  PlanOperand a, b, c;
  Index batch = 0;
  bool streamed = false;
};

// A 4-D strided copy: dst[sum i_d dst_strides[d]] = src[sum i_d src_strides[d]] for
// i < dims; when dst is Y, dst = alpha src + beta dst. The unfused baseline's permutations.
struct PlanPermute {
  PlanArray src = PlanArray::X, dst = PlanArray::Z1;
  std::array<Index, 4> dims{}, src_strides{}, dst_strides{};
};

using PlanStep = std::variant<PlanGemm, PlanPermute>;

struct BlrGemmPlan {
  std::vector<PlanStep> steps;
  Index z1_size = 0, z2_size = 0;  // workspace values
};

// The signals: X (in x B) and Y (out x B) in `layout` with these strides between
// consecutive signals (ColMajor) or features (RowMajor). Op::Adjoint is Op::Trans (real
// values only).
struct PlanSignals {
  Layout layout = Layout::ColMajor;
  Index batch = 0, x_ld = 0, y_ld = 0;
  int value_bytes = 0;  // of one signal value (2: half or bfloat16 on tensor cores)
};

BlrGemmPlan blast_gemm_plan(const BlockGrid& grid, Op op, const PlanSignals& signals);
BlrGemmPlan monarch_gemm_plan(const BlockGrid& grid, Op op, const PlanSignals& signals);

// BLAST (A, not A^T) in two GEMMs instead of three: the couplings folded into one side's
// factors, so that no coupling stage remains (two launches, which is what the small layers'
// time is made of at many tokens).
//   First:  Z2 (K r x B) = F X, F = [diag(s_kl) V_l] (rows (k, t), columns (l, j)): one GEMM
//           over all of X; then y_k = U_k Z2_k as in blast_gemm_plan.
//   Last:   Z1 as in blast_gemm_plan; then Y = G Z1, G = [U_k diag(s_kl)] (rows (k, i),
//           columns (t, l), Z1's row order): one GEMM.
// Each costs K (First) or L (Last) times its side's multiply-adds, and F or G holds K r n or
// L r m values.
enum class BlastFold { First, Last };
BlrGemmPlan blast_folded_plan(const BlockGrid& grid, const PlanSignals& signals, BlastFold fold);
// Multiply-adds per token of the three-stage plan's two GEMMs, and of each fold.
Index blast_plan_work(const BlockGrid& grid);
Index blast_fold_work(const BlockGrid& grid, BlastFold fold);
// The fold with less work.
BlastFold blast_cheaper_fold(const BlockGrid& grid);
// Whether Auto runs BLAST's folded plan (the cheaper fold): A (not A^T) on 16-bit signals
// (tensor cores), at least kBlastFoldMinBatch tokens, and the fold's work at most
// kBlastFoldMaxWork times the three-stage plan's (see blr_gemm_plan.cpp for the measurements).
inline constexpr Index kBlastFoldMinBatch = 16;
inline constexpr double kBlastFoldMaxWork = 3.0;
bool blast_folds(const BlockGrid& grid, Op op, const PlanSignals& signals);

// The unfused baselines (issue #9): what the public PyTorch code runs, each batched product
// on contiguous (batch, tokens, features) tensors with a permutation pass around it, for
// Y = alpha A X + beta Y with signal-contiguous X and Y (PyTorch's (tokens, features)).
//   BLAST (4 permutations, 3 bmm; the paper's 8 b n r intermediate traffic): X -> (L, B, w),
//     bmm with V_l, -> (r, B, L), bmm with the couplings, -> (K, B, r), bmm with U_k,
//     -> Y.
//   Monarch (4 permutations, 2 bmm): X -> (L, B, w), bmm with R in the public layout
//     (rank index major, block row minor), (L, B, r, K) -> (L, B, K, r) -> (K, B, L, r),
//     bmm with L_k, -> Y.
BlrGemmPlan blast_unfused_plan(const BlockGrid& grid, const PlanSignals& signals);
BlrGemmPlan monarch_unfused_plan(const BlockGrid& grid, const PlanSignals& signals);

// Extra arrays: s_kl[t] at (t L + l) K + k (for each t a column-major K x L matrix), and
// R_kl(t, j) at (l w + j) K r + k r + t (for each l a column-major (K r) x w matrix).
template <class T>
std::vector<T> blast_coupling_by_rank(const Blast<T>& A);
// BLAST's folded factors (blast_folded_plan): F (column-major K r x n), F((k, t), (l, j)) =
// s_kl[t] V_l(t, j) at (l w + j) K r + k r + t; G (column-major m x r L), G((k, i), (t, l)) =
// U_k(i, t) s_kl[t] at (t L + l) m + k h + i.
template <class T>
std::vector<T> blast_fold_first(const Blast<T>& A);
template <class T>
std::vector<T> blast_fold_last(const Blast<T>& A);
template <class T>
std::vector<T> monarch_right_by_column(const Monarch<T>& A);
// R_kl(t, j) at l K r w + (t K + k) w + j: for each l the public code's row-major (r K) x w
// matrix, rank index major.
template <class T>
std::vector<T> monarch_right_unfused(const Monarch<T>& A);
// L_kl(row, t) at k h r L + (t L + l) h + row: for each k a column-major h x (r L) matrix,
// rank index major. R_kl(t, j) at l w r K + j r K + t K + k: for each l a column-major
// (r K) x w matrix, rank index major.
template <class T>
std::vector<T> monarch_left_by_rank(const Monarch<T>& A);
template <class T>
std::vector<T> monarch_right_by_rank(const Monarch<T>& A);

}  // namespace strop::detail
