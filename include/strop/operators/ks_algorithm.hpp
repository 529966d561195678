#pragma once
// How a KS factor is applied on the GPU (DESIGN.md section 5).
//   Fused        our output-stationary kernel: gathers the strided rows of X straight from
//                global memory, any pattern, layout, batch and scalar type.
//   StridedGemm  cuBLAS batched GEMM run directly on the strided row groups of X and Y (no
//                permutation pass) where they are batch-contiguous (RowMajor), or d = 1;
//                batch-first operands with d > 1 go through batch-contiguous copies (a
//                tiled transpose each way, temporary memory of their size).
//   Bmm          the baseline of the papers: permute X into groups, batched GEMM, permute back.
//   Dense        cuBLAS GEMM with the materialised dense matrix (baseline; small factors).
//   SmallBatch   few signals (decoding a token): the weights read once, along their rows, by
//                warps (any pattern, layout and batch; meant for B <= 16 and large blocks).
//   Auto         a cost model picks Fused, StridedGemm or SmallBatch (16-bit signals: Fused,
//                StridedGemm or Dense); with tuning on (strop/core/tuning.hpp), measured.
#include <string_view>

#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/ks_pattern.hpp"

namespace strop {

enum class KSAlgorithm { Auto, Fused, StridedGemm, Bmm, Dense, SmallBatch };

std::string_view to_string(KSAlgorithm algorithm);

// The algorithm used by this thread's GPU applications of KS factors (default Auto).
KSAlgorithm ks_algorithm();
void set_ks_algorithm(KSAlgorithm algorithm);

// Whether StridedGemm runs in place on these views (cuBLAS needs one unit stride per group);
// otherwise it works on batch-contiguous copies.
template <class T>
bool ks_strided_gemm_supported(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y);

// What Auto picks for this application (the cost model). Also for half/bfloat16 signals
// (T = half, bfloat16: the choices of apply_reduced_precision, never SmallBatch).
template <class T>
KSAlgorithm ks_auto_algorithm(const KSPattern& p, Op op, ConstView<T> X, ConstView<T> Y);

// Sets the algorithm for the lifetime of the guard (benchmarks, tests).
class KSAlgorithmGuard {
 public:
  explicit KSAlgorithmGuard(KSAlgorithm algorithm) : previous_(ks_algorithm()) {
    set_ks_algorithm(algorithm);
  }
  ~KSAlgorithmGuard() { set_ks_algorithm(previous_); }
  KSAlgorithmGuard(const KSAlgorithmGuard&) = delete;
  KSAlgorithmGuard& operator=(const KSAlgorithmGuard&) = delete;

 private:
  KSAlgorithm previous_;
};

}  // namespace strop
