#pragma once
// BlockDiag<T>: diag(A_1, ..., A_n), each block acting on its own rows of the batch.
#include <vector>

#include "strop/expr/any_operator.hpp"

namespace strop {

template <class T>
class BlockDiag : public OperatorBase<BlockDiag<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "block_diag";

  explicit BlockDiag(std::vector<AnyOperator<T>> blocks);

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  const std::vector<AnyOperator<T>>& blocks() const { return blocks_; }
  std::vector<AnyOperator<T>> children() const { return blocks_; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  double transposed_flops(Index batch) const;
  Index parameter_count() const;

 private:
  std::vector<AnyOperator<T>> blocks_;
  Index rows_ = 0;
  Index cols_ = 0;
};

template <class T>
BlockDiag<T> transpose_of(const BlockDiag<T>& b);
template <class T>
BlockDiag<T> adjoint_of(const BlockDiag<T>& b);

template <Operator E, Operator... Es>
requires(std::is_same_v<typename E::Scalar, typename Es::Scalar>&&...)
    BlockDiag<typename E::Scalar> block_diag(const E& first, const Es&... rest) {
  using T = typename E::Scalar;
  return BlockDiag<T>(std::vector<AnyOperator<T>>{AnyOperator<T>(first), AnyOperator<T>(rest)...});
}

extern template class BlockDiag<float>;
extern template class BlockDiag<double>;
extern template class BlockDiag<std::complex<float>>;
extern template class BlockDiag<std::complex<double>>;

}  // namespace strop
