#pragma once
// KSFactor<T>: one Kronecker-sparse factor K with pattern (a,b,c,d):
//   K[i*b*d + k*d + j, i*c*d + l*d + j] = w[i,k,l,j],   i<a, k<b, l<c, j<d,
// all other entries zero. The values are a 4-D (a,b,c,d) array, entry (i,k,l,j) at
// ((i*b + k)*c + l)*d + j. Applying K is a*d independent dense b x c products on strided
// row sets of the batch (Algorithm 2 of the KS paper), so no permutation pass is needed.
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "strop/core/device_cache.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"
#include "strop/operators/ks_algorithm.hpp"
#include "strop/operators/ks_pattern.hpp"

namespace strop {

template <class T>
class KSFactor : public OperatorBase<KSFactor<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "ks_factor";

  // values.size() must be pattern.nnz() (ShapeError); values must be finite (NumericalError).
  KSFactor(KSPattern pattern, std::vector<T> values);
  // Standard normal entries scaled by 1/sqrt(c), so that E|K x|^2 = |x|^2 and chains of
  // random factors stay O(1).
  static KSFactor random(KSPattern pattern, std::mt19937& rng);
  // The entries of `dense` (rows() x cols(), ShapeError otherwise) on the support. With
  // tolerance > 0, an entry off the support larger than it in magnitude is a PatternError;
  // tolerance 0 ignores them; a NaN or negative tolerance is a NumericalError.
  static KSFactor from_dense(KSPattern pattern, const HostMatrix<T>& dense,
                             RealOf<T> tolerance = 0);
  // K^T (conjugate: K^H) as its own factor with pattern (a,c,b,d): the values move, unlike
  // the Transposed<KSFactor> view that A.transpose() gives.
  static KSFactor transposed_copy(const KSFactor& factor, bool conjugate = false);

  const KSPattern& pattern() const { return state_->pattern; }
  const std::vector<T>& values() const { return state_->values; }
  T value(Index i, Index k, Index l, Index j) const {
    const KSPattern& p = pattern();
    return state_->values[static_cast<std::size_t>(((i * p.b + k) * p.c + l) * p.d + j)];
  }

  Index rows() const { return pattern().rows(); }
  Index cols() const { return pattern().cols(); }
  Index nnz() const { return pattern().nnz(); }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  // The GPU path of apply_reduced_precision below (KSFactor<float>, device views only).
  template <class Storage>
  void apply_reduced_device(Op op, ConstView<Storage> X, MatrixView<Storage> Y, float alpha,
                            float beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const { return nnz(); }

 private:
  struct State {
    State(KSPattern p, std::vector<T> v) : pattern(p), values(std::move(v)) {}
    KSPattern pattern;
    std::vector<T> values;
    // Device copies, made on the first GPU application (values are immutable).
    DeviceCache<T> device_values;   // (a, b, c, d) order, for the fused kernel
    DeviceCache<T> device_grouped;  // (a, d, b, c) order, for the GEMM paths
    DeviceCache<T> device_dense;    // the materialised matrix, for the Dense baseline
    // Float factors applied to 16-bit signals: the values rounded to half ([0]) or bfloat16
    // ([1]) words, as (a, d, b, c), as (a, d, c, b) (the tensor-core kernel's order for K^T)
    // and as the materialised matrix.
    DeviceCache<std::uint16_t> device_words[2][3];
  };
  void apply_device(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  // What Auto runs with tuning on (strop/core/tuning.hpp): measured once, then cached.
  KSAlgorithm tuned_algorithm(Op op, ConstView<T> X, MatrixView<T> Y, Context& ctx) const;
  std::shared_ptr<const State> state_;
};

// Mixed precision: a float factor applied to half or bfloat16 signals. On the GPU the values
// are rounded once to the signals' type and the products accumulate in fp32 on tensor cores:
// Auto (and Fused) run the fused tensor-core kernel (any pattern, op, layout, batch), or
// cuBLAS's batched GEMM on the strided groups where the cost model picks StridedGemm; Auto
// takes Dense for batch-first signals with d > 1 and few groups (a d <= 16; a dense copy of
// at most 64 MB is made once); blocks of at most 8 x 8 run in fp32 on CUDA cores. Bmm
// and Dense are the 16-bit baselines; SmallBatch has no 16-bit version (DeviceError). Each
// output is rounded once. Host signals go through float.
template <ReducedPrecision Storage>
void apply_reduced_precision(const KSFactor<float>& factor, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class KSFactor<float>;
extern template class KSFactor<double>;
extern template class KSFactor<std::complex<float>>;
extern template class KSFactor<std::complex<double>>;

}  // namespace strop
