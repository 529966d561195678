// apply_reduced_precision for KS chains: half/bfloat16 signals through a float chain.
#include "runtime/reduced_apply.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/elementwise.hpp"
#include "strop/operators/ks_algorithm.hpp"
#include "strop/operators/ks_chain.hpp"
#if STROP_HAVE_CUDA
#include "operators/transforms/hadamard_device.hpp"
#endif

namespace strop {

template <class Storage>
void apply_reduced_precision(const KSChain<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
#if STROP_HAVE_CUDA
  const auto& form = A.hadamard_form();
  if (form && ks_algorithm() == KSAlgorithm::Auto && detail::hadamard_device_takes(*form, X, Y))
    return detail::hadamard_device_apply<Storage>(*form, op, X, Y, alpha, beta, ctx);
  detail::apply_through_float(A, op, X, Y, alpha, beta, ctx);  // any other chain
#else
  throw DeviceError("ks_chain: strop was built without CUDA; apply it to host data");
#endif
}

template void apply_reduced_precision<half>(const KSChain<float>&, Op, ConstView<half>,
                                            MatrixView<half>, float, float, Context&);
template void apply_reduced_precision<bfloat16>(const KSChain<float>&, Op, ConstView<bfloat16>,
                                                MatrixView<bfloat16>, float, float, Context&);

}  // namespace strop
