// apply_reduced_precision for KS chains: half/bfloat16 signals through a float chain.
#include "runtime/reduced_apply.hpp"
#include "strop/core/buffer.hpp"
#include "strop/expr/elementwise.hpp"
#include "strop/operators/ks_algorithm.hpp"
#include "strop/operators/ks_chain.hpp"
#if STROP_HAVE_CUDA
#include "operators/ks/ks_chain_steps.hpp"
#include "operators/ks/ks_device.hpp"
#include "operators/transforms/hadamard_device.hpp"
#endif

namespace strop {

template <class T>
template <class Storage>
void KSChain<T>::apply_reduced_device(Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                                      float alpha, float beta, Context& ctx) const {
  static_assert(std::is_same_v<T, float>, "16-bit signals go through float chains");
#if STROP_HAVE_CUDA
  const bool automatic = ks_algorithm() == KSAlgorithm::Auto;
  if (hadamard_form_ && automatic && detail::hadamard_device_takes(*hadamard_form_, X, Y))
    return detail::hadamard_device_apply<Storage>(*hadamard_form_, op, X, Y, alpha, beta, ctx);
  const std::vector<KSPattern> chain = patterns();
  if (automatic && detail::ks_chain_fusable(chain, sizeof(float)))
    return detail::ks_chain_fused_apply(chain, packed_device_values(ctx), op, X, Y, alpha, beta,
                                        ctx);
  // op(K_1 ... K_L) runs K_1 first unless op is NoTrans (as in apply_unchecked).
  const std::vector<KSFactor<float>>& fs = factors();
  const std::size_t count = fs.size();
  const bool forward = op != Op::NoTrans;
  auto factor_at = [&](std::size_t s) -> const KSFactor<float>& {
    return forward ? fs[s] : fs[count - 1 - s];
  };
  auto out_rows = [&](std::size_t s) {
    return forward ? factor_at(s).cols() : factor_at(s).rows();
  };
  detail::apply_in_turn(
      count, out_rows, X, Y, alpha, beta, ctx,
      [&](std::size_t s, ConstView<Storage> in, MatrixView<Storage> out, float a, float b) {
        factor_at(s).apply_reduced_device(op, in, out, a, b, ctx);
      });
#else
  (void)op, (void)X, (void)Y, (void)alpha, (void)beta, (void)ctx;
  throw DeviceError("ks_chain: strop was built without CUDA; apply it to host data");
#endif
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const KSChain<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
  A.apply_reduced_device(op, X, Y, alpha, beta, ctx);
}

#define STROP_INSTANTIATE(S)                                                                       \
  template void KSChain<float>::apply_reduced_device(Op, ConstView<S>, MatrixView<S>, float,       \
                                                     float, Context&) const;                       \
  template void apply_reduced_precision<S>(const KSChain<float>&, Op, ConstView<S>, MatrixView<S>, \
                                           float, float, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)
#undef STROP_INSTANTIATE

}  // namespace strop
