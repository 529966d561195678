// apply_reduced_precision: half/bfloat16 signals through a float Blast, Monarch or LowRank. On the
// GPU the permutation-free GEMM plan runs on tensor cores (blr_gemm_cuda.cpp) where both views have
// a unit stride on the same side; other device views go through float copies; host signals through
// float (the reference the GPU path is tested against).
#include "runtime/reduced_apply.hpp"
#include "strop/operators/blast.hpp"
#include "strop/operators/lowrank.hpp"
#include "strop/operators/monarch.hpp"
#if STROP_HAVE_CUDA
#include "operators/blr/blr_gemm_device.hpp"
#endif

namespace strop {
namespace {
template <class Operator>
Index rank_of(const Operator& A) {
  if constexpr (requires { A.grid(); }) {
    return A.grid().rank;
  } else {
    return A.rank();
  }
}

template <class Storage, class Operator>
void apply_blr_reduced(const Operator& A, Op op, ConstView<Storage> X, MatrixView<Storage> Y,
                       float alpha, float beta, Context& ctx) {
  detail::DeviceScope device_scope(X.space == MemorySpace::Device);
  if (detail::reduced_done_without_device(A, op, X, Y, alpha, beta, ctx)) return;
#if STROP_HAVE_CUDA
  if (rank_of(A) > 0 && detail::blr_plan_takes(X, Y))
    return detail::blr_plan_apply_device<Storage>(A, op, X, Y, alpha, beta, ctx);
  detail::apply_through_float(A, op, X, Y, alpha, beta, ctx);
#else
  throw DeviceError(
      detail::concat(Operator::type_name, ": strop was built without CUDA; apply it to host data"));
#endif
}
}  // namespace

template <ReducedPrecision Storage>
void apply_reduced_precision(const Blast<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  apply_blr_reduced(A, op, X, Y, alpha, beta, ctx);
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const LowRank<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  apply_blr_reduced(A, op, X, Y, alpha, beta, ctx);
}

template <ReducedPrecision Storage>
void apply_reduced_precision(const Monarch<float>& A, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha, float beta, Context& ctx) {
  apply_blr_reduced(A, op, X, Y, alpha, beta, ctx);
}

#define STROP_INSTANTIATE(S)                                                                       \
  template void apply_reduced_precision<S>(const Blast<float>&, Op, ConstView<S>, MatrixView<S>,   \
                                           float, float, Context&);                                \
  template void apply_reduced_precision<S>(const LowRank<float>&, Op, ConstView<S>, MatrixView<S>, \
                                           float, float, Context&);                                \
  template void apply_reduced_precision<S>(const Monarch<float>&, Op, ConstView<S>, MatrixView<S>, \
                                           float, float, Context&);
STROP_INSTANTIATE(half)
STROP_INSTANTIATE(bfloat16)

}  // namespace strop
