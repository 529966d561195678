#pragma once
// Internal: the GEMM plans of blr_gemm_plan.hpp run on the GPU with cuBLAS
// (blr_gemm_cuda.cpp), for float and double operators on signals of their type and for
// float operators on half/bfloat16 signals (tensor cores, fp32 accumulation).
#include <cstddef>
#include <type_traits>

#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// alpha and beta: double for double signals, float otherwise.
template <class Storage>
using PlanScale = std::conditional_t<std::is_same_v<Storage, double>, double, float>;

// Whether the views suit a plan: device views with a unit stride on the same side (both
// signal-contiguous or both batch-contiguous).
template <class Storage>
bool blr_plan_takes(ConstView<Storage> X, MatrixView<Storage> Y);

// How a plan runs. Auto: the decode kernel (blr_decode.hpp: one launch, A not A^T, not
// double) for up to kDecodeAutoBatch signals, the skinny path where skinny_auto says so, one
// cuBLAS call per stage otherwise. While the context's stream is captured into a CUDA graph
// cuBLAS replays faster, so Auto takes it then, on 8 padded signals for 16-bit signals of 2-7
// (pad_while_capturing), and the decode kernel on the large layers where it replays faster
// (decode_replays_faster).
// Gemm: cuBLAS always. Decode: the decode kernel (up to kDecodeMaxBatch signals). Fused: the
// fused kernel (blr_fused.hpp; half or bfloat16 signals). Skinny: one launch of our skinny
// kernel per stage, chained by programmatic dependent launch (blr_skinny.hpp; up to
// kSkinnyMaxTokens float, half or bfloat16 signals, A not A^T). GemmPadded: cuBLAS on
// kPaddedSignals signals, X and Y copied in and out (fewer signals only). GemmFolded: BLAST's
// folded plan (blast_folded_plan, the cheaper fold; A, not A^T), which Auto takes where
// blast_folds says so; Gemm is then the three-stage plan. DeviceError where they do not apply.
// (Benchmarks and tests pick.)
enum class PlanPath { Auto, Gemm, Decode, Fused, Skinny, GemmPadded, GemmFolded };
// cuBLAS's kernels for 2-7 signals replay about twice as slow as for 8 (bench/NOTES-blr.md,
// session 29), so while a graph is captured Auto runs 16-bit plans of 2-7 signals on 8: two
// or three small copies more, which a replay pays far less for than a call does.
inline constexpr Index kPaddedSignals = 8;
inline bool pad_while_capturing(Index batch) {
  return batch >= 2 && batch < kPaddedSignals;
}
inline constexpr Index kDecodeMaxBatch = 8;
// On an H100 (bench/NOTES-blr.md, session 15) the decode kernel beat the cuBLAS plans by a
// median 1.2-1.5x at 1 and 2 signals, tied at 4 and lost at 8 (CUDA-core sums).
inline constexpr Index kDecodeAutoBatch = 2;
// Whether the decode kernel replays faster than the cuBLAS plan from a CUDA graph, for
// `batch` signals and `weight_bytes` of weights. Graph replay on an H100, cuBLAS plan / decode
// kernel (bench/NOTES-blr.md): at 2 signals 1.11-1.68x on the Llama-7B layers (17-46 MB of
// 16-bit weights; cuBLAS's kernels for 2 signals take about twice their time for 1) and a
// median 1.06 on Llama-3.2-1B's up and down (15.7 MB), mostly below 1 on the smaller layers
// (sessions 19-27); at 1 signal 0.93-1.39x (geometric mean 1.09) on Llama-7B's gate_up and
// down (45-46 MB), 0.6-0.93x on the 16-17 MB layers (session 27). (16-bit signals of 2 are
// padded to 8 while capturing before this rule is asked: pad_while_capturing.)
inline bool decode_replays_faster(Index batch, std::size_t weight_bytes) {
  constexpr std::size_t MiB = std::size_t(1) << 20;
  return (batch == 2 && weight_bytes >= 12 * MiB) || (batch == 1 && weight_bytes >= 32 * MiB);
}

// Whether Auto runs a Monarch or BLAST plan of 16-bit signals (as measured) for `batch`
// signals by the skinny path: 3 to 7 signals, where cuBLAS's kernels take about as long as for
// 16 or longer. Measured per call on an H200 over the Table 3 layers (bf16, bench/NOTES-blr.md,
// session 29), skinny / cuBLAS plan, medians: 0.60-0.70 at 3, 0.72-0.78 at 4, 0.84-0.87 at 5, 1.00
// at 6, 0.87-0.88 at 7. Not for LowRank (one entry per stage, too few blocks), nor at 1-2 signals
// (the decode kernel or cuBLAS is faster) or from 8 (cuBLAS is). While a graph is captured, 16-bit
// signals of 2-7 take the padded cuBLAS plan first (pad_while_capturing).
inline bool skinny_auto(Index batch) {
  return batch >= 3 && batch < kPaddedSignals;
}

// Whether the public device apply of a float Monarch or BLAST runs its GEMM plan (Auto path)
// instead of its KS form. Measured per call on an H200 over the Table 3 layers
// (bench/NOTES-blr.md, session 31), KS form / plan time, medians over the layers (Monarch,
// BLAST) at 1 / 2 / 4 / 16 / 128 / 1024 signals:
// - A, signals contiguous: 1.28, 1.29 / 1.86, 1.47 (the plan's decode kernel) / 0.79, 0.76 /
//   1.05, 0.96 / 1.19, 1.16 / 1.21, 1.14;
// - A^T, signals contiguous: 3.13, 2.43 / 0.92, 0.95 / 0.96, 0.91 / 0.96, 0.85 / 1.13, 1.06 /
//   1.12, 1.13;
// - A, batch contiguous: 2.39, 2.27 at 2 / 1.16, 0.99 / 1.14, 1.02 / 1.16, 1.06 / 1.20, 1.17
//   (at 1 signal both layouts are the same views).
// A^T on batch-contiguous views was not measured and keeps the KS form.
inline constexpr Index kFloatPlanMinBatch = 128;
inline bool float_plan_preferred(Op op, ConstView<float> X, MatrixView<float> Y) {
  if (!blr_plan_takes(X, Y)) return false;
  const Index batch = X.cols;
  const bool signals_contiguous = X.row_stride == 1;
  if (op == Op::NoTrans)
    return !signals_contiguous || batch <= kDecodeAutoBatch || batch >= kFloatPlanMinBatch;
  return signals_contiguous && (batch == 1 || batch >= kFloatPlanMinBatch);
}

// Y = alpha op(A) X + beta Y by A's plan (Operator: Blast, Monarch or LowRank of float, or of
// double for double signals; Op::Adjoint is Op::Trans). DeviceError unless blr_plan_takes.
template <class Storage, class Operator>
void blr_plan_apply_device(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                           PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx,
                           PlanPath path = PlanPath::Auto);

// The device apply of a Monarch or BLAST of scalar T (Operator) takes its GEMM plan instead of
// its KS form where float_plan_preferred says so: then this runs the plan and returns true;
// otherwise, and for every T but float, it does nothing and returns false. One place for the
// rule both leaves follow.
template <class T, class Operator>
bool apply_float_plan_where_preferred(const Operator& A, Op op, ConstView<T> X, MatrixView<T> Y,
                                      T alpha, T beta, Context& ctx) {
  if constexpr (std::is_same_v<T, float>) {
    if (float_plan_preferred(op, X, Y)) {
      blr_plan_apply_device<float>(A, op, X, Y, alpha, beta, ctx);
      return true;
    }
  }
  return false;
}

// Y = alpha A X + beta Y by A's unfused baseline (blast_unfused_plan / monarch_unfused_plan:
// the public PyTorch code's bmm + permute sequence) on signal-contiguous device views
// (Operator: Blast or Monarch). For benchmarks.
template <class Storage, class Operator>
void blr_unfused_apply_device(const Operator& A, ConstView<Storage> X, MatrixView<Storage> Y,
                              PlanScale<Storage> alpha, PlanScale<Storage> beta, Context& ctx);

}  // namespace strop::detail
