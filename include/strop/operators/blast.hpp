#pragma once
// Blast<T> (papers/NOTES.md, paper 004): the M x N operator is cut into a
// row_blocks x col_blocks grid and block (k, l) equals U_k diag(s_{k,l}) V_l, with
// U_k ((M / row_blocks) x rank) shared along block-row k and V_l (rank x (N / col_blocks))
// shared along block-column l. With one block it is the low-rank U diag(s) V.
//
// Storage: `left` holds U_0, U_1, ... each column-major; `right` holds V_0, V_1, ... each
// column-major; `diagonals` holds s as a row_blocks x col_blocks x rank array, s_{k,l}
// contiguous at offset (k * col_blocks + l) * rank.
// Applying A to B signals costs rank (M + N + row_blocks col_blocks) B multiply-adds.
#include <memory>
#include <random>
#include <vector>

#include "strop/core/lazy.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"
#include "strop/operators/block_grid.hpp"
#include "strop/operators/ks_chain.hpp"

namespace strop {

template <class T>
class Blast : public OperatorBase<Blast<T>> {
 public:
  using Scalar = T;
  using ConstBlock = Eigen::Map<const HostMatrix<T>>;
  using ConstVector = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
  static constexpr const char* type_name = "blast";

  // ShapeError when the grid does not divide M x N or an array has the wrong size;
  // NumericalError on NaN/Inf.
  Blast(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank, std::vector<T> left,
        std::vector<T> diagonals, std::vector<T> right);
  // Normal factors scaled so that applying A roughly keeps the norm of a random signal.
  static Blast random(Index rows, Index cols, Index row_blocks, Index col_blocks, Index rank,
                      std::mt19937& rng);

  Index rows() const { return state_->grid.rows; }
  Index cols() const { return state_->grid.cols; }
  const BlockGrid& grid() const { return state_->grid; }
  // U_k, s_{k,l} and V_l (ShapeError outside the grid).
  ConstBlock left_factor(Index k) const;
  ConstVector diagonal(Index k, Index l) const;
  ConstBlock right_factor(Index l) const;
  const std::vector<T>& left_values() const { return state_->left; }
  const std::vector<T>& diagonal_values() const { return state_->diagonals; }
  const std::vector<T>& right_values() const { return state_->right; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const {
    return static_cast<Index>(state_->left.size() + state_->diagonals.size() +
                              state_->right.size());
  }

 private:
  struct State {
    BlockGrid grid;
    std::vector<T> left;
    std::vector<T> diagonals;
    std::vector<T> right;
  };
  std::shared_ptr<const State> state_;
  // The GPU applies A as the KS chain (K, h, r, 1) (1, K, L, r) (L, r, w, 1): the U_k,
  // the couplings s_{k,l} (a diagonal per block, d = r), the V_l (blr_ks_form.cpp). (A float
  // Blast on device signals takes its GEMM plan instead where that measured faster:
  // operators/blr/blr_gemm_device.hpp, float_plan_preferred.)
  std::shared_ptr<Lazy<KSChain<T>>> device_form_ = std::make_shared<Lazy<KSChain<T>>>();
  std::shared_ptr<detail::BlrPlanWeights<T>> plan_weights_ =
      std::make_shared<detail::BlrPlanWeights<T>>();

 public:
  // The device copies its GEMM plans read (operators/blr/blr_gemm_cuda.cpp).
  const detail::BlrPlanWeights<T>& plan_weights() const { return *plan_weights_; }
};

// Mixed precision: a float Blast applied to half or bfloat16 signals. On the GPU, signals
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
void apply_reduced_precision(const Blast<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class Blast<float>;
extern template class Blast<double>;
extern template class Blast<std::complex<float>>;
extern template class Blast<std::complex<double>>;

}  // namespace strop
