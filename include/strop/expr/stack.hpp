#pragma once
// Stack<T, Vertical>: [A_1; A_2; ...] (vstack, equal column counts) or [A_1 A_2 ...]
// (hstack, equal row counts). The transpose of one is the other.
#include <vector>

#include "strop/expr/any_operator.hpp"

namespace strop {

template <class T, bool Vertical>
class Stack : public OperatorBase<Stack<T, Vertical>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = Vertical ? "vstack" : "hstack";

  explicit Stack(std::vector<AnyOperator<T>> parts);

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  const std::vector<AnyOperator<T>>& parts() const { return parts_; }
  std::vector<AnyOperator<T>> children() const { return parts_; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  double transposed_flops(Index batch) const;
  Index parameter_count() const;

 private:
  std::vector<AnyOperator<T>> parts_;
  Index rows_ = 0;
  Index cols_ = 0;
};

template <class T>
using VStack = Stack<T, true>;
template <class T>
using HStack = Stack<T, false>;

template <class T, bool Vertical>
Stack<T, !Vertical> transpose_of(const Stack<T, Vertical>& s);
template <class T, bool Vertical>
Stack<T, !Vertical> adjoint_of(const Stack<T, Vertical>& s);

template <Operator E, Operator... Es>
requires(std::is_same_v<typename E::Scalar, typename Es::Scalar>&&...)
    VStack<typename E::Scalar> vstack(const E& first, const Es&... rest) {
  using T = typename E::Scalar;
  return VStack<T>(std::vector<AnyOperator<T>>{AnyOperator<T>(first), AnyOperator<T>(rest)...});
}
template <Operator E, Operator... Es>
requires(std::is_same_v<typename E::Scalar, typename Es::Scalar>&&...)
    HStack<typename E::Scalar> hstack(const E& first, const Es&... rest) {
  using T = typename E::Scalar;
  return HStack<T>(std::vector<AnyOperator<T>>{AnyOperator<T>(first), AnyOperator<T>(rest)...});
}

#define STROP_EXTERN_STACK(T)           \
  extern template class Stack<T, true>; \
  extern template class Stack<T, false>;
STROP_EXTERN_STACK(float)
STROP_EXTERN_STACK(double)
STROP_EXTERN_STACK(std::complex<float>)
STROP_EXTERN_STACK(std::complex<double>)
#undef STROP_EXTERN_STACK

}  // namespace strop
