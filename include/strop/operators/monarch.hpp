#pragma once
// Monarch<T>, in its block low-rank form (papers/NOTES.md, paper 004): the M x N operator
// is cut into a row_blocks x col_blocks grid, and block (k, l), of size
// (M / row_blocks) x (N / col_blocks), equals L_{k,l} R_{k,l} with L_{k,l} of rank columns
// and R_{k,l} of rank rows. Rectangular grids (row_blocks != col_blocks) are allowed.
//
// Storage: `left` holds the L blocks in [k][l] order, each column-major
// ((M / row_blocks) x rank); `right` holds the R blocks the same way (rank x (N / col_blocks)).
// Applying A to B signals costs rank (col_blocks M + row_blocks N) B multiply-adds.
#include <memory>
#include <random>
#include <vector>

#include "strop/core/lazy.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"
#include "strop/operators/block_grid.hpp"
#include "strop/operators/ks_factor.hpp"
#include "strop/operators/permutation.hpp"

namespace strop {

template <class T>
class Monarch : public OperatorBase<Monarch<T>> {
 public:
  using Scalar = T;
  using ConstBlock = Eigen::Map<const HostMatrix<T>>;
  static constexpr const char* type_name = "monarch";

  // ShapeError when the grid does not divide M x N or an array has the wrong size;
  // NumericalError on NaN/Inf.
  Monarch(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
          std::vector<T> left, std::vector<T> right);
  // Normal factors scaled so that applying A roughly keeps the norm of a random signal.
  static Monarch random(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
                        std::mt19937& rng);

  Index rows() const { return state_->grid.rows; }
  Index cols() const { return state_->grid.cols; }
  const BlockGrid& grid() const { return state_->grid; }
  // L_{k,l} and R_{k,l} (ShapeError outside the grid).
  ConstBlock left_block(Index k, Index l) const;
  ConstBlock right_block(Index k, Index l) const;
  const std::vector<T>& left_values() const { return state_->left; }
  const std::vector<T>& right_values() const { return state_->right; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const {
    return static_cast<Index>(state_->left.size() + state_->right.size());
  }

 private:
  struct State {
    BlockGrid grid;
    std::vector<T> left;
    std::vector<T> right;
  };
  std::shared_ptr<const State> state_;

 public:
  // What the GPU applies: A = left * shuffle * right, with right = the R_{k,l} as the KS
  // factor (L, K r, w, 1) (its output in (l, k, t) order), shuffle the permutation to
  // (k, l, t) order, left = the L_{k,l} as (K, h, L r, 1) (blr_ks_form.cpp). The
  // permute + batched GEMM form of the Monarch papers. (A float Monarch on device signals takes its
  // GEMM plan instead where that measured faster: operators/blr/blr_gemm_device.hpp,
  // float_plan_preferred.)
  struct KSForm {
    KSFactor<T> left;
    Permutation<T> shuffle;
    KSFactor<T> right;
  };

 private:
  std::shared_ptr<Lazy<KSForm>> device_form_ = std::make_shared<Lazy<KSForm>>();
  std::shared_ptr<detail::BlrPlanWeights<T>> plan_weights_ =
      std::make_shared<detail::BlrPlanWeights<T>>();

 public:
  // The device copies its GEMM plans read (operators/blr/blr_gemm_cuda.cpp).
  const detail::BlrPlanWeights<T>& plan_weights() const { return *plan_weights_; }
};

// Mixed precision: a float Monarch applied to half or bfloat16 signals. On the GPU, signals
// with a unit stride (either layout) run the permutation-free GEMM plan on tensor cores
// (fp32 accumulation; the values and the intermediates rounded to 16 bits); other views go
// through float copies of the signals. On the host, through float.
// At 1-2 signals (A, not A^T) the stages run in one cooperative decode kernel instead, at 3-7
// one launch of a skinny kernel per stage, chained by programmatic dependent launch. While the
// context's stream is captured into a CUDA graph the cuBLAS calls are kept (they replay
// faster), on 8 padded signals for 2-7 signals, and the decode kernel on large layers at 1
// (operators/blr/blr_gemm_device.hpp). Tested and measured on an H100 and an H200
// (bench/NOTES-blr.md).
template <ReducedPrecision Storage>
void apply_reduced_precision(const Monarch<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class Monarch<float>;
extern template class Monarch<double>;
extern template class Monarch<std::complex<float>>;
extern template class Monarch<std::complex<double>>;

}  // namespace strop
