#include "strop/operators/dense.hpp"

#include "runtime/host_gemm.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
Dense<T>::Dense(HostMatrix<T> matrix) : state_(std::make_shared<State>(std::move(matrix))) {
  detail::require_finite("dense", state_->matrix.data(), state_->matrix.size());
}

template <class T>
void Dense<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                               Context& ctx) const {
  const HostMatrix<T>& a = state_->matrix;
  if (X.space == MemorySpace::Device) {
    const Index count = a.size();
    // conj(A) is needed when a row-major output turns A^H into a conj-only operand.
    const bool needs_conj = is_complex_v<T> && op == Op::Adjoint && Y.row_stride != 1;
    const T* a_dev = state_->device.get(a.data(), count, ctx);
    const T* a_conj = needs_conj ? state_->device.get(a.data(), count, ctx, true) : nullptr;
    return detail::dense_apply_device(a_dev, a_conj, a.rows(), a.cols(), op, X, Y, alpha, beta,
                                      ctx);
  }
  detail::host_gemm(op, a, X, Y, alpha, beta);
}

template <class T>
double Dense<T>::flops(Index batch) const {
  return detail::flops_per_fma<T>() * double(rows()) * double(cols()) * double(batch);
}

#if !STROP_HAVE_CUDA
namespace detail {
template <class T>
void dense_apply_device(const T*, const T*, Index, Index, Op, ConstView<T>, MatrixView<T>,
                        ComputeScalar<T>, ComputeScalar<T>, Context&) {
  throw DeviceError("dense: GPU application requested but strop was built without CUDA");
}
}  // namespace detail
#define STROP_INSTANTIATE_DEVICE(T)                                                            \
  template void detail::dense_apply_device(const T*, const T*, Index, Index, Op, ConstView<T>, \
                                           MatrixView<T>, ComputeScalar<T>, ComputeScalar<T>,  \
                                           Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE_DEVICE)
STROP_INSTANTIATE_DEVICE(half)
STROP_INSTANTIATE_DEVICE(bfloat16)
#endif

#define STROP_INSTANTIATE(T) template class Dense<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
