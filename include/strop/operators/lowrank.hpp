#pragma once
// LowRank<T>: A = left * right with left M x r and right r x N. Applied as two GEMMs
// through an r x B temporary, so it costs r (M + N) multiply-adds per signal.
#include <memory>
#include <random>

#include "strop/core/lazy.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"
#include "strop/operators/block_grid.hpp"
#include "strop/operators/dense.hpp"

namespace strop {

template <class T>
class LowRank : public OperatorBase<LowRank<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "lowrank";

  // ShapeError unless left.cols() == right.rows(); NumericalError on NaN/Inf. Rank 0 is
  // allowed (the zero operator).
  LowRank(HostMatrix<T> left, HostMatrix<T> right);
  // Normal factors scaled so that applying A roughly keeps the norm of a random signal.
  static LowRank random(Index rows, Index cols, Index rank, std::mt19937& rng);

  Index rows() const { return state_->left.rows(); }
  Index cols() const { return state_->right.cols(); }
  Index rank() const { return state_->left.cols(); }
  const HostMatrix<T>& left() const { return state_->left; }
  const HostMatrix<T>& right() const { return state_->right; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const { return rank() * (rows() + cols()); }

 private:
  struct State {
    HostMatrix<T> left;
    HostMatrix<T> right;
  };
  std::shared_ptr<const State> state_;
  // The GPU applies left and right as two Dense operators: two cuBLAS GEMMs.
  struct DenseFactors {
    Dense<T> left, right;
  };
  std::shared_ptr<Lazy<DenseFactors>> device_form_ = std::make_shared<Lazy<DenseFactors>>();
  std::shared_ptr<detail::BlrPlanWeights<T>> plan_weights_ =
      std::make_shared<detail::BlrPlanWeights<T>>();

 public:
  // The device copies its GEMM plan reads (operators/blr/blr_gemm_cuda.cpp: a Monarch of one
  // block).
  const detail::BlrPlanWeights<T>& plan_weights() const { return *plan_weights_; }
};

// Mixed precision: a float LowRank applied to half or bfloat16 signals: on the GPU two
// tensor-core GEMMs (fp32 accumulation; the factors and the r x B intermediate rounded to 16
// bits) where X and Y share a unit stride, float copies of the signals otherwise; on the
// host, through float.
// At 1-2 signals (A, not A^T) the stages run in one cooperative decode kernel instead. While
// the context's stream is captured into a CUDA graph the cuBLAS calls are kept (they replay
// faster), on 8 padded signals for 2-7 signals, and the decode kernel on large layers at 1
// (operators/blr/blr_gemm_device.hpp). Tested and measured on an H100 and an H200
// (bench/NOTES-blr.md).
template <ReducedPrecision Storage>
void apply_reduced_precision(const LowRank<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class LowRank<float>;
extern template class LowRank<double>;
extern template class LowRank<std::complex<float>>;
extern template class LowRank<std::complex<double>>;

}  // namespace strop
