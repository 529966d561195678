// The cost model behind KSAlgorithm::Auto, and where each GEMM-based path applies.
//
// Large dense blocks (b and c of 32 or more) turn each group into a real GEMM: cuBLAS's
// tuned kernels, run in place on the strided row groups, beat a generic SIMT tile there
// (with few signals only when the groups are few). Batch-first signals with d > 1, which
// cuBLAS cannot address in place, go through batch-contiguous copies: two transposes cost
// about twice the signals' traffic, below the fused kernel's 4-9x the roofline there
// (bench/NOTES-ks.md).
// Small blocks (butterflies, b, c < 32) are bound by memory traffic, where the fused kernel
// reads X once and writes Y once while tiny batched GEMMs waste most of each tile.
#include <algorithm>

#include "operators/ks/ks_mma_tile.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/operators/ks_algorithm.hpp"

namespace strop {
namespace {
template <class T>
bool batch_contiguous(const ConstView<T>& v) {
  return v.col_stride == 1 || v.cols == 1;
}
}  // namespace

template <class T>
bool ks_strided_gemm_supported(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y) {
  // RowMajor: each group is a strided GEMM on whole rows. ColMajor: only d = 1 groups are
  // contiguous, and A^H would need a conjugate-only operand, which cuBLAS lacks.
  if (batch_contiguous(X) && batch_contiguous(Y)) return true;
  const bool conj_only = is_complex_v<T> && op == Op::Adjoint;
  return p.d == 1 && X.row_stride == 1 && Y.row_stride == 1 && !conj_only;
}

namespace {
// The model for 4-byte and wider values (below, the 16-bit adjustments).
template <class T>
KSAlgorithm model_choice(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y) {
  const Index out = op == Op::NoTrans ? p.b : p.c;
  const Index in = op == Op::NoTrans ? p.c : p.b;
  // Below 64 signals the batched GEMMs of many groups waste their tiles; but a few large
  // groups (a low-rank factor, Monarch's and BLAST's stages: a d <= 256) are GEMV-like
  // products that cuBLAS runs at the speed of reading the weights once, where the fused
  // kernel re-reads them per tile (1.2 ms instead of ~0.01 ms for 4096 x 1024 at B = 1).
  const bool enough_work = X.cols >= 64 || p.a * p.d <= 256;
  const bool big_blocks = std::min(out, in) >= 32 && enough_work;
  const bool strided = ks_strided_gemm_supported(p, op, X, Y);
  // A few signals on large blocks: the small-batch kernel reads the weights once along
  // their rows. Measured on an H100 (bench/NOTES-blr.md): 2.6-3x faster than the fused
  // kernel up to 16 signals where cuBLAS cannot address the groups in place (ColMajor,
  // d > 1), and 1.37x faster than cuBLAS's strided batched GEMM for one signal, but slower
  // than it at 16 signals.
  const bool few_signals_big_blocks = X.cols <= 16 && std::min(out, in) >= 32;
  if (few_signals_big_blocks && (X.cols == 1 || !strided)) return KSAlgorithm::SmallBatch;
  if (big_blocks) return KSAlgorithm::StridedGemm;  // in place, or through copies
  return KSAlgorithm::Fused;
}

// 16-bit signals: the small-batch kernel reads 4-byte values only, so the tensor-core kernel
// takes its cases. Batch-first signals with d > 1 make that kernel take tiles of several
// groups (contiguous runs of features need them), which re-read X and W from L2 many times;
// where the groups are few (a d <= 16) the dense matrix costs at most 16x the flops of K and
// cuBLAS runs it near its memory bound. Measured on an H100 (bench/NOTES-ks.md): Dense 1.2-6x
// faster than ks_mma.cu there, slower above a d = 24; the pipelined kernel beats Dense there
// with tiles of 4 or 8 groups except for a d <= 4 (Dense 1.06-1.4x faster: its GEMM runs
// near cuBLAS's peak on 4x the flops), and with tiles of 2 groups (d = 2, 6) only for a d >=
// 6 with at least 384 inputs and 256 outputs per group (0.79-0.98x Dense's time; 1.0-2.3x
// elsewhere, d = 2 always slower). The dense copy (at most 2^25 values, 64 MB) is made once
// per factor.
template <class T>
KSAlgorithm sixteen_bit_choice(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y) {
  KSAlgorithm choice = model_choice(p, op, X, Y);
  // StridedGemm through copies: the copies of 16-bit signals ran at ~6x the roofline on an
  // H100, behind the tensor-core kernel (bench/NOTES-ks.md); in place only.
  const bool copies = choice == KSAlgorithm::StridedGemm && !ks_strided_gemm_supported(p, op, X, Y);
  if (choice == KSAlgorithm::SmallBatch || copies) choice = KSAlgorithm::Fused;
  const bool batch_first = X.col_stride != 1 && X.cols > 1;
  const bool few_groups = p.d > 1 && p.a * p.d <= 16 && std::min(p.b, p.c) > 8 &&
                          p.rows() * p.cols() <= (Index(1) << 25);
  // The pipelined kernel where its heuristic takes it (whole weight vectors needed), except
  // for the few-group products above that Dense wins.
  const Index out = op == Op::NoTrans ? p.b : p.c, in = op == Op::NoTrans ? p.c : p.b;
  const detail::KSMmaTile tile = detail::ks_mma_heuristic_tile(out, p.d, X.cols, !batch_first,
                                                               detail::shared_memory_for_plans());
  const bool dense_wins = tile.tj == 2 ? p.a * p.d < 6 || in < 384 || out < 256 : p.a * p.d <= 4;
  const bool pipelined = in % 8 == 0 && tile.pipelined && !dense_wins;
  if (choice == KSAlgorithm::Fused && batch_first && few_groups && !pipelined)
    choice = KSAlgorithm::Dense;
  return choice;
}
}  // namespace

template <class T>
KSAlgorithm ks_auto_algorithm(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y) {
  if constexpr (is_reduced_precision_v<T>) {
    return sixteen_bit_choice(p, op, X, Y);
  } else {
    return model_choice(p, op, X, Y);
  }
}

#define STROP_INSTANTIATE(T)                                                         \
  template bool ks_strided_gemm_supported(const KSPattern& p, Op op, ConstView<T> X, \
                                          ConstView<T> Y);                           \
  template KSAlgorithm ks_auto_algorithm(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop
