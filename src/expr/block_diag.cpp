#include "strop/expr/block_diag.hpp"

#include <functional>
#include <numeric>

#include "strop/expr/algebra.hpp"

namespace strop {

template <class T>
BlockDiag<T>::BlockDiag(std::vector<AnyOperator<T>> blocks) : blocks_(std::move(blocks)) {
  require<ShapeError>(!blocks_.empty(), "block_diag: needs at least one block");
  for (const auto& b : blocks_)
    require<ShapeError>(!__builtin_add_overflow(rows_, b.rows(), &rows_) &&
                            !__builtin_add_overflow(cols_, b.cols(), &cols_),
                        "block_diag: the sum of the blocks' extents overflows a 64-bit index");
}

template <class T>
void BlockDiag<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                   Context& ctx) const {
  const bool transposed = op != Op::NoTrans;
  Index in_offset = 0, out_offset = 0;
  for (const auto& b : blocks_) {
    const Index in = transposed ? b.rows() : b.cols();
    const Index out = transposed ? b.cols() : b.rows();
    if (in == 0) {
      detail::scale(beta, Y.row_block(out_offset, out), ctx);
    } else if (out > 0) {
      b.apply_unchecked(op, X.row_block(in_offset, in), Y.row_block(out_offset, out), alpha, beta,
                        ctx);
    }
    in_offset += in;
    out_offset += out;
  }
}

template <class T>
double BlockDiag<T>::flops(Index batch) const {
  return std::transform_reduce(blocks_.begin(), blocks_.end(), 0.0, std::plus<>(),
                               [&](const AnyOperator<T>& b) { return b.flops(batch); });
}

template <class T>
double BlockDiag<T>::transposed_flops(Index batch) const {
  return std::transform_reduce(blocks_.begin(), blocks_.end(), 0.0, std::plus<>(),
                               [&](const AnyOperator<T>& b) { return b.transposed_flops(batch); });
}

template <class T>
Index BlockDiag<T>::parameter_count() const {
  Index total = 0;
  for (const auto& b : blocks_)
    total += b.parameter_count();
  return total;
}

template <class T>
BlockDiag<T> transpose_of(const BlockDiag<T>& b) {
  std::vector<AnyOperator<T>> blocks;
  for (const auto& block : b.blocks())
    blocks.emplace_back(block.transpose());
  return BlockDiag<T>(std::move(blocks));
}

template <class T>
BlockDiag<T> adjoint_of(const BlockDiag<T>& b) {
  std::vector<AnyOperator<T>> blocks;
  for (const auto& block : b.blocks())
    blocks.emplace_back(block.adjoint());
  return BlockDiag<T>(std::move(blocks));
}

#define STROP_INSTANTIATE(T)                                 \
  template class BlockDiag<T>;                               \
  template BlockDiag<T> transpose_of(const BlockDiag<T>& b); \
  template BlockDiag<T> adjoint_of(const BlockDiag<T>& b);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
