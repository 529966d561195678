#pragma once
// Diagonal<T>: diag(d), n x n. On the GPU a row-scaling kernel with the values uploaded once.
#include <memory>

#include "strop/core/device_cache.hpp"
#include "strop/expr/operator_base.hpp"

namespace strop {

template <class T>
class Diagonal : public OperatorBase<Diagonal<T>> {
 public:
  using Scalar = T;
  using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  static constexpr const char* type_name = "diagonal";

  explicit Diagonal(Vector diagonal);

  Index rows() const { return diagonal_->size(); }
  Index cols() const { return diagonal_->size(); }
  const Vector& diagonal() const { return *diagonal_; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const { return rows(); }

 private:
  std::shared_ptr<const Vector> diagonal_;
  // d and conj(d) on the device, made on first use (the values are immutable).
  std::shared_ptr<DeviceCache<T>> device_diagonal_ = std::make_shared<DeviceCache<T>>();
};

extern template class Diagonal<float>;
extern template class Diagonal<double>;
extern template class Diagonal<std::complex<float>>;
extern template class Diagonal<std::complex<double>>;

}  // namespace strop
