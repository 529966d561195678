#pragma once
// Internal: the chains hadamard() builds, applied on the host from their HadamardForm (the
// fast Walsh-Hadamard transform of each signal in a cache-resident buffer) instead of the
// generic KS factor path.
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/hadamard_form.hpp"

namespace strop::detail {

// Y = alpha op(H) X + beta Y with H the matrix of `form`, on host views that do not overlap.
template <class T>
void hadamard_host_apply(const HadamardForm& form, Op op, ConstView<T> X, MatrixView<T> Y, T alpha,
                         T beta);

}  // namespace strop::detail
