#pragma once
// Permutation<T>: (P X)[i, :] = X[perm[i], :]. Its transpose is the inverse permutation.
#include <memory>
#include <vector>

#include "strop/core/device_cache.hpp"
#include "strop/expr/operator_base.hpp"

namespace strop {

template <class T>
class Permutation : public OperatorBase<Permutation<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "permutation";

  // perm must hold each of 0..n-1 once (PatternError otherwise).
  explicit Permutation(std::vector<Index> perm);
  // The bit-reversal permutation of n = 2^k indices (FFT order); ShapeError if host memory
  // cannot hold n indices.
  static Permutation bit_reversal(Index n);

  Index rows() const { return static_cast<Index>(perm_->size()); }
  Index cols() const { return rows(); }
  const std::vector<Index>& indices() const { return *perm_; }
  // The indices, shared with every copy (lets dft()'s product recognise its own digit reversal).
  const std::shared_ptr<const std::vector<Index>>& shared_indices() const { return perm_; }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  double flops(Index) const { return 0; }
  Index parameter_count() const { return 0; }

 private:
  std::shared_ptr<const std::vector<Index>> perm_;
  // Device copies of perm and of its inverse (P^T gathers with the inverse), made on the
  // first GPU application.
  std::shared_ptr<DeviceCache<Index>> device_perm_ = std::make_shared<DeviceCache<Index>>();
  std::shared_ptr<DeviceCache<Index>> device_inverse_ = std::make_shared<DeviceCache<Index>>();
};

extern template class Permutation<float>;
extern template class Permutation<double>;
extern template class Permutation<std::complex<float>>;
extern template class Permutation<std::complex<double>>;

}  // namespace strop
