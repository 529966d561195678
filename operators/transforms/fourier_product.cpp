// detail::apply_product_whole: the product that dft() and inverse_dft() build, recognised
// through its chain's FourierForm and its own digit reversal, runs as one Stockham FFT (host
// or GPU) instead of a gather pass and the chain's factors.
#include <complex>
#include <cstring>
#include <vector>

#include "operators/transforms/fft_host.hpp"
#include "strop/expr/any_operator.hpp"
#include "strop/operators/ks_chain.hpp"
#include "strop/operators/permutation.hpp"
#if STROP_HAVE_CUDA
#include "operators/transforms/fft_device.hpp"
#endif

namespace strop::detail {
namespace {

// The operand as an E (directly, or inside an AnyOperator), else nullptr.
template <class E>
const E* operand_as(ProductOperand operand) {
  using T = typename E::Scalar;
  if (std::strcmp(operand.type, E::type_name) == 0) return static_cast<const E*>(operand.object);
  if (std::strcmp(operand.type, AnyOperator<T>::type_name) == 0)
    return static_cast<const AnyOperator<T>*>(operand.object)->template as<E>();
  return nullptr;
}

}  // namespace

template <class T>
bool apply_product_whole(ProductOperand lhs, ProductOperand rhs, Op op, ConstView<T> X,
                         MatrixView<T> Y, T alpha, T beta, Context& ctx) {
  if constexpr (!is_complex_v<T>) {
    return false;
  } else {
    const KSChain<T>* chain = operand_as<KSChain<T>>(lhs);
    const Permutation<T>* perm = operand_as<Permutation<T>>(rhs);
    if (chain == nullptr || perm == nullptr || !chain->fourier_form()) return false;
    const FourierForm& form = *chain->fourier_form();
    if (perm->shared_indices() != form.input_order && perm->indices() != *form.input_order)
      return false;
    // F is symmetric: F^T = F and F^H = conj(F), the DFT of the other sign.
    const int sign = op == Op::Adjoint ? -form.sign : form.sign;
    if (X.space == MemorySpace::Host) {
      fft_host_apply(form, sign, X, Y, alpha, beta);
      return true;
    }
#if STROP_HAVE_CUDA
    if constexpr (std::is_same_v<T, std::complex<float>>) {
      // Forced KS algorithms keep the chain's own path on the GPU (as for Hadamard).
      if (ks_algorithm() == KSAlgorithm::Auto && fft_device_supported(form.n)) {
        const std::complex<float>* twiddles = form.device_twiddles->get_or_make(
            fft_device_twiddle_count(form.n), ctx, [&] { return fft_device_twiddles(form.n); });
        fft_device_apply(form.n, sign > 0, twiddles, X, Y,
                         alpha * std::complex<float>(float(form.scale)), beta, ctx);
        return true;
      }
    }
#else
    (void)ctx;
#endif
    return false;
  }
}

#define STROP_INSTANTIATE(T)                                                          \
  template bool apply_product_whole(ProductOperand, ProductOperand, Op, ConstView<T>, \
                                    MatrixView<T>, T, T, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop::detail
