#pragma once
// Internal: the product dft() builds (Fourier chain times digit reversal), applied on the
// host by the Stockham FFT from the chain's FourierForm.
#include "strop/core/op.hpp"
#include "strop/core/view.hpp"
#include "strop/operators/fourier_form.hpp"

namespace strop::detail {

// The radices of the Stockham stages for n = m 2^k (m odd): m (when > 1), then radix 4 while
// two bits are left, then radix 2. Shared by the host and the GPU plans.
std::vector<Index> stockham_radices(Index n);

// Y = alpha scale F^{sign} X + beta Y for host views of a complex T (X and Y do not overlap).
template <class T>
void fft_host_apply(const FourierForm& form, int sign, ConstView<T> X, MatrixView<T> Y, T alpha,
                    T beta);

}  // namespace strop::detail
