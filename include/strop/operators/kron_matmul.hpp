#pragma once
// Kron-matmul on the GPU: Y = alpha (G_1 ⊗ G_2 ⊗ ... ⊗ G_n) X + beta Y for dense factors
// G_f (Q_f x P_f) of any shapes, never materialising the product (issue #8, FastKron).
//
//   Fused    FastKron's sliced multiply: one kernel for several consecutive small factors
//            (P, Q <= 32) whose chunk fits in shared memory, the one-factor tiled kernel for
//            the others, intermediates ping-ponging through the workspace.
//   Sliced   our one-factor kernel for every factor (no multi-factor fusion).
//   Gemm     one cuBLAS strided-batched GEMM per factor, the sliced multiply's permuted
//            store written by the output strides (one pass over memory per factor at
//            cuBLAS's rate; tensor cores for double; cuBLAS's 64-bit interface where a
//            size, e.g. the batch-last leading dimension (K/P) B, exceeds an int).
//   Shuffle  the baseline of GPyTorch/PyKronecker: per factor a reshape, a cuBLAS GEMM and
//            a transpose kernel (two passes per factor).
//   Auto     fused passes for runs of small factors (P, Q <= 8) on batch-first data, a GEMM
//            pass for every other factor (what measured fastest: bench/NOTES-kron.md).
//
// X and Y are device views in either layout (or any strides). The work space holds the
// intermediates; pass one of at least kron_matmul_workspace_bytes() to avoid an
// allocation per call (otherwise a stream-ordered temporary is taken from the driver pool;
// strided, non-packed X or Y on a GEMM pass also take one, for a packed copy).
//
// Half and bfloat16 signals (float factors): one tensor-core GEMM per factor (or per merged
// run of small factors) with fp32 accumulation, and on batch-first data one fused
// tensor-core pass per pair of 32 x 32 factors where the features are a multiple of 32768;
// the factors and every intermediate are rounded to the 16-bit type, so the error grows with
// the number of factors (about n units of roundoff).
#include <cstddef>
#include <span>
#include <string_view>

#include "strop/core/context.hpp"
#include "strop/core/op.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/core/view.hpp"

namespace strop {

enum class KronAlgorithm { Auto, Fused, Sliced, Gemm, Shuffle };

std::string_view to_string(KronAlgorithm algorithm);

// The algorithm used by this thread's GPU applications of Kron<T> (default Auto).
KronAlgorithm kron_algorithm();
void set_kron_algorithm(KronAlgorithm algorithm);

class KronAlgorithmGuard {
 public:
  explicit KronAlgorithmGuard(KronAlgorithm algorithm) : previous_(kron_algorithm()) {
    set_kron_algorithm(algorithm);
  }
  ~KronAlgorithmGuard() { set_kron_algorithm(previous_); }
  KronAlgorithmGuard(const KronAlgorithmGuard&) = delete;
  KronAlgorithmGuard& operator=(const KronAlgorithmGuard&) = delete;

 private:
  KronAlgorithm previous_;
};

// One factor as the engine reads it: G (Q x P) with G[q][p] = data[q*stride_q + p*stride_p],
// conjugated when `conjugate`. data == nullptr stands for the identity (P == Q).
template <class T>
struct KronFactorRef {
  const T* data = nullptr;
  Index P = 0;  // columns of G: the input extent this factor consumes
  Index Q = 0;  // rows of G: the output extent it produces
  Index stride_q = 0;
  Index stride_p = 0;
  bool conjugate = false;

  // op(F) for F stored column-major (rows x cols, leading dimension rows) at `data`.
  static KronFactorRef column_major(const T* data, Index rows, Index cols, Op op) {
    if (op == Op::NoTrans) return {data, cols, rows, 1, rows, false};
    // Conjugating a real factor is a no-op, and a flagged one would be packed needlessly.
    return {data, rows, cols, rows, 1, op == Op::Adjoint && is_complex_v<T>};
  }
  static KronFactorRef identity(Index n) { return {nullptr, n, n, 0, 0, false}; }
};

// Bytes of device work space kron_matmul needs for these factors, this batch and layout, on
// the current device (plans depend on its shared memory per block; without a device, an
// H100's).
template <class T>
std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<T>> factors, Index batch,
                                        Layout layout,
                                        KronAlgorithm algorithm = KronAlgorithm::Auto);

// Y = alpha (G_1 ⊗ ... ⊗ G_n) X + beta Y on device views. X is (prod P_f) x B, Y is
// (prod Q_f) x B. `workspace` may be null (then allocated per call) or hold at least
// kron_matmul_workspace_bytes(...) bytes of device memory. Throws ShapeError on
// inconsistent shapes, DeviceError without a device or on CUDA/cuBLAS failures.
template <class T>
void kron_matmul(std::span<const KronFactorRef<T>> factors, ConstView<T> X, MatrixView<T> Y,
                 T alpha, T beta, Context& ctx, void* workspace = nullptr,
                 std::size_t workspace_bytes = 0, KronAlgorithm algorithm = KronAlgorithm::Auto);

// The 16-bit path: float factors, half or bfloat16 signals (tensor cores). `algorithm`:
// Gemm runs one cuBLAS GEMM per factor (the baseline of the benchmark); any other value
// takes Auto's plan (GEMMs, merged runs of small factors, pair passes of 32 x 32 factors).
// With tuning on (strop/core/tuning.hpp), Auto measures its plan against one GEMM per factor
// once per problem and keeps the faster, as the full-precision path does with its algorithms.
template <ReducedPrecision Storage>
std::size_t kron_matmul_workspace_bytes(std::span<const KronFactorRef<float>> factors, Index batch,
                                        Layout layout,
                                        KronAlgorithm algorithm = KronAlgorithm::Auto);
template <ReducedPrecision Storage>
void kron_matmul(std::span<const KronFactorRef<float>> factors, ConstView<Storage> X,
                 MatrixView<Storage> Y, float alpha, float beta, Context& ctx,
                 void* workspace = nullptr, std::size_t workspace_bytes = 0,
                 KronAlgorithm algorithm = KronAlgorithm::Auto);

}  // namespace strop
