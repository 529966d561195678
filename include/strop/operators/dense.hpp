#pragma once
// Dense<T>: an explicit M x N matrix. CPU: Eigen GEMM; GPU: cuBLAS GEMM on the cached
// device copy.
#include <memory>

#include "strop/core/device_cache.hpp"
#include "strop/core/reduced_precision.hpp"
#include "strop/expr/operator_base.hpp"

namespace strop {

template <class T>
class Dense : public OperatorBase<Dense<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "dense";

  explicit Dense(HostMatrix<T> matrix);

  Index rows() const { return state_->matrix.rows(); }
  Index cols() const { return state_->matrix.cols(); }
  const HostMatrix<T>& matrix() const { return state_->matrix; }
  // The cached device copy of the values (column-major rows() x cols()), uploaded on first
  // use: lets engines that read the values themselves (the Kron-matmul kernels) share it.
  const T* device_values(Context& ctx) const {
    return state_->device.get(state_->matrix.data(), state_->matrix.size(), ctx);
  }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const { return rows() * cols(); }

 private:
  struct State {
    explicit State(HostMatrix<T> m) : matrix(std::move(m)) {}
    HostMatrix<T> matrix;
    DeviceCache<T> device;
  };
  std::shared_ptr<const State> state_;
};

namespace detail {
// cuBLAS path of Dense (operators/dense/dense_cublas.cpp): Y = alpha op(A) X + beta Y with A
// column-major rows x cols on the device. Also for half/bfloat16 A, X and Y (fp32
// accumulation; the baselines of the 16-bit kernels).
template <class T>
void dense_apply_device(const T* a, const T* a_conj, Index rows, Index cols, Op op, ConstView<T> X,
                        MatrixView<T> Y, ComputeScalar<T> alpha, ComputeScalar<T> beta,
                        Context& ctx);
}  // namespace detail

extern template class Dense<float>;
extern template class Dense<double>;
extern template class Dense<std::complex<float>>;
extern template class Dense<std::complex<double>>;

}  // namespace strop
