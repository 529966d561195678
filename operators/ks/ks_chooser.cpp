// The cost model behind KSAlgorithm::Auto, and where each GEMM-based path applies.
//
// Large dense blocks (b and c of 32 or more) turn each group into a real GEMM: cuBLAS's
// tuned kernels, run in place on the strided row groups, beat a generic SIMT tile there
// (with few signals only when the groups are few).
// Small blocks (butterflies, b, c < 32) are bound by memory traffic, where the fused kernel
// reads X once and writes Y once while tiny batched GEMMs waste most of each tile.
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

template <class T>
KSAlgorithm ks_auto_algorithm(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y) {
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
  if (big_blocks && strided) return KSAlgorithm::StridedGemm;
  return KSAlgorithm::Fused;
}

#define STROP_INSTANTIATE(T)                                                         \
  template bool ks_strided_gemm_supported(const KSPattern& p, Op op, ConstView<T> X, \
                                          ConstView<T> Y);                           \
  template KSAlgorithm ks_auto_algorithm(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop
