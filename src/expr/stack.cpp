#include "strop/expr/stack.hpp"

#include <functional>
#include <numeric>

#include "strop/expr/algebra.hpp"

namespace strop {

template <class T, bool Vertical>
Stack<T, Vertical>::Stack(std::vector<AnyOperator<T>> parts) : parts_(std::move(parts)) {
  const char* name = type_name;
  require<ShapeError>(!parts_.empty(), name, ": needs at least one operator");
  for (const auto& p : parts_) {
    const Index shared = Vertical ? p.cols() : p.rows();
    const Index expected = Vertical ? parts_.front().cols() : parts_.front().rows();
    require<ShapeError>(shared == expected, name, ": operand of shape ", p.rows(), "x", p.cols(),
                        " does not match the first operand's ", parts_.front().rows(), "x",
                        parts_.front().cols());
    Index& stacked = Vertical ? rows_ : cols_;
    require<ShapeError>(!__builtin_add_overflow(stacked, Vertical ? p.rows() : p.cols(), &stacked),
                        name, ": the sum of the operands' extents overflows a 64-bit index");
  }
  (Vertical ? cols_ : rows_) = Vertical ? parts_.front().cols() : parts_.front().rows();
}

template <class T, bool Vertical>
void Stack<T, Vertical>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                         Context& ctx) const {
  // A vstack (or a transposed hstack) writes each part into its own rows of Y; the other
  // two cases sum the parts, each reading its own rows of X.
  const bool transposed = op != Op::NoTrans;
  const bool split_output = Vertical != transposed;
  Index offset = 0;
  T accumulate = beta;
  bool wrote = false;
  for (const auto& p : parts_) {
    const Index own =
        split_output ? (transposed ? p.cols() : p.rows()) : (transposed ? p.rows() : p.cols());
    if (split_output) {
      p.apply_unchecked(op, X, Y.row_block(offset, own), alpha, beta, ctx);
    } else {
      if (own == 0) continue;
      p.apply_unchecked(op, X.row_block(offset, own), Y, alpha, accumulate, ctx);
      accumulate = T(1);
      wrote = true;
    }
    offset += own;
  }
  if (!split_output && !wrote) detail::scale(beta, Y, ctx);  // every part was empty
}

// The parts' flops, plus the additions that combine the parts' results where they share an
// output (an hstack, or a transposed vstack): one per output for each part after the first,
// counted as Sum counts its addition (detail::addition_flops).
template <class T, bool Vertical>
double Stack<T, Vertical>::flops(Index batch) const {
  const double parts =
      std::transform_reduce(parts_.begin(), parts_.end(), 0.0, std::plus<>(),
                            [&](const AnyOperator<T>& p) { return p.flops(batch); });
  return Vertical ? parts
                  : parts + double(parts_.size() - 1) * detail::addition_flops<T>(rows_, batch);
}

template <class T, bool Vertical>
double Stack<T, Vertical>::transposed_flops(Index batch) const {
  const double parts =
      std::transform_reduce(parts_.begin(), parts_.end(), 0.0, std::plus<>(),
                            [&](const AnyOperator<T>& p) { return p.transposed_flops(batch); });
  return Vertical ? parts + double(parts_.size() - 1) * detail::addition_flops<T>(cols_, batch)
                  : parts;
}

template <class T, bool Vertical>
Index Stack<T, Vertical>::parameter_count() const {
  Index total = 0;
  for (const auto& p : parts_)
    total += p.parameter_count();
  return total;
}

template <class T, bool Vertical>
Stack<T, !Vertical> transpose_of(const Stack<T, Vertical>& s) {
  std::vector<AnyOperator<T>> parts;
  for (const auto& p : s.parts())
    parts.emplace_back(p.transpose());
  return Stack<T, !Vertical>(std::move(parts));
}

template <class T, bool Vertical>
Stack<T, !Vertical> adjoint_of(const Stack<T, Vertical>& s) {
  std::vector<AnyOperator<T>> parts;
  for (const auto& p : s.parts())
    parts.emplace_back(p.adjoint());
  return Stack<T, !Vertical>(std::move(parts));
}

#define STROP_INSTANTIATE_ORIENTATION(T, V)                 \
  template class Stack<T, V>;                               \
  template Stack<T, !V> transpose_of(const Stack<T, V>& s); \
  template Stack<T, !V> adjoint_of(const Stack<T, V>& s);
#define STROP_INSTANTIATE(T)             \
  STROP_INSTANTIATE_ORIENTATION(T, true) \
  STROP_INSTANTIATE_ORIENTATION(T, false)
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
