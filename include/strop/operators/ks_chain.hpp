#pragma once
// KSChain<T>: the product K_1 K_2 ... K_L of Kronecker-sparse factors (K_1 leftmost,
// applied last). A leaf for AnyOperator: the chain is one node, so a fused kernel can take
// it whole: on the GPU, with KSAlgorithm::Auto, a chain of square-block factors whose
// signals fit in shared memory (a butterfly up to n = 4096 in float, for example) runs as
// one kernel that reads X once and writes Y once; other algorithms, or other chains, apply
// the factors one by one through a ping-pong workspace. Products of KS factors and chains join one
// chain at compile time, and a chain's transpose is the reversed chain of transposed factors
// (NOTES.md).
#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "strop/core/reduced_precision.hpp"
#include "strop/expr/algebra.hpp"
#include "strop/operators/fourier_form.hpp"
#include "strop/operators/hadamard_form.hpp"
#include "strop/operators/ks_factor.hpp"

namespace strop {

template <class T>
class KSChain : public OperatorBase<KSChain<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "ks_chain";

  // Non-empty, and each factor's columns must be the next factor's rows (PatternError).
  explicit KSChain(std::vector<KSFactor<T>> factors);
  // The same, marking the chain as the Hadamard matrix `form` describes (for hadamard();
  // PatternError unless the sizes agree and the form is one hadamard() makes: m in {1, 12,
  // 20, 28}, 0 <= log2 <= 62; NumericalError for a non-finite scale; the values are trusted
  // to match).
  KSChain(std::vector<KSFactor<T>> factors, const detail::HadamardForm& form);
  // The same, marking the chain as the DFT factor that `form` describes (for dft(); sign
  // +-1, a finite scale and input_order a permutation, else PatternError/NumericalError).
  KSChain(std::vector<KSFactor<T>> factors, detail::FourierForm form);
  static KSChain random(const std::vector<KSPattern>& patterns, std::mt19937& rng);

  const std::vector<KSFactor<T>>& factors() const { return *factors_; }
  std::vector<KSPattern> patterns() const;
  std::size_t size() const { return factors_->size(); }
  const std::optional<detail::HadamardForm>& hadamard_form() const { return hadamard_form_; }
  const std::optional<detail::FourierForm>& fourier_form() const { return fourier_form_; }

  // The chain with factors i and i+1 replaced by one factor of pattern
  // fuse(p_i, p_{i+1}) holding their exact product. PatternError unless they are chainable,
  // ShapeError unless i + 1 < size().
  KSChain fused(std::size_t i) const;
  // The reversed chain of transposed (conjugate: adjoint) factors; the values move.
  KSChain transposed_copy(bool conjugate = false) const;

  Index rows() const { return factors_->front().rows(); }
  Index cols() const { return factors_->back().cols(); }

  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta, Context& ctx) const;
  // The GPU path of apply_reduced_precision below (KSChain<float>, device views only).
  template <class Storage>
  void apply_reduced_device(Op op, ConstView<Storage> X, MatrixView<Storage> Y, float alpha,
                            float beta, Context& ctx) const;
  double flops(Index batch) const;
  Index parameter_count() const;

 private:
  // All factors' values one after the other on ctx's device (the fused chain kernel's input).
  const T* packed_device_values(Context& ctx) const;
  std::shared_ptr<const std::vector<KSFactor<T>>> factors_;
  std::optional<detail::HadamardForm> hadamard_form_;
  std::optional<detail::FourierForm> fourier_form_;
  // All factors' values one after the other on the device, for the fused chain kernel
  // (made on its first use; the chain is immutable).
  std::shared_ptr<DeviceCache<T>> packed_values_ = std::make_shared<DeviceCache<T>>();
};

// Mixed precision: a float chain applied to half or bfloat16 signals, computed in fp32 with
// each output rounded once. On the GPU a chain made by hadamard() runs a Walsh-Hadamard
// kernel (no weights to read: bound by the signals' memory traffic): on tensor cores for
// contiguous signals of 2^8 ... 2^15 values and m 2^7 ... m 2^11 (16-bit products with fp32
// accumulation: the intermediates are rounded to 16 bits once per 8 bits of the index,
// about one unit of roundoff in all), else in fp32 on CUDA cores. With Auto, a chain that
// fits the fused multi-factor kernel runs it with a fp32 tile (16-bit reads and writes, one
// rounding per output). Other chains, or a forced KSAlgorithm, go factor by factor through
// the 16-bit factor path (apply_reduced_precision of KSFactor): each intermediate is
// rounded to the storage type. On the host, through float.
template <ReducedPrecision Storage>
void apply_reduced_precision(const KSChain<float>& chain, Op op, ConstView<Storage> X,
                             MatrixView<Storage> Y, float alpha = 1, float beta = 0,
                             Context& ctx = default_context());

extern template class KSChain<float>;
extern template class KSChain<double>;
extern template class KSChain<std::complex<float>>;
extern template class KSChain<std::complex<double>>;

// ---- compile-time rewrites (more specialised than the generic algebra.hpp templates) ----
namespace detail {
template <class T>
void append_factors(std::vector<KSFactor<T>>& out, const KSFactor<T>& f) {
  out.push_back(f);
}
template <class T>
void append_factors(std::vector<KSFactor<T>>& out, const KSChain<T>& chain) {
  out.insert(out.end(), chain.factors().begin(), chain.factors().end());
}
template <class T, class L, class R>
KSChain<T> join_chain(const L& lhs, const R& rhs) {
  std::vector<KSFactor<T>> factors;
  append_factors(factors, lhs);
  append_factors(factors, rhs);
  return KSChain<T>(std::move(factors));
}
}  // namespace detail

template <class T>
KSChain<T> operator*(const KSFactor<T>& lhs, const KSFactor<T>& rhs) {
  return detail::join_chain<T>(lhs, rhs);
}
template <class T>
KSChain<T> operator*(const KSChain<T>& lhs, const KSFactor<T>& rhs) {
  return detail::join_chain<T>(lhs, rhs);
}
template <class T>
KSChain<T> operator*(const KSFactor<T>& lhs, const KSChain<T>& rhs) {
  return detail::join_chain<T>(lhs, rhs);
}
template <class T>
KSChain<T> operator*(const KSChain<T>& lhs, const KSChain<T>& rhs) {
  return detail::join_chain<T>(lhs, rhs);
}

template <class T>
KSChain<T> transpose_of(const KSChain<T>& chain) {
  return chain.transposed_copy(false);
}
template <class T>
KSChain<T> adjoint_of(const KSChain<T>& chain) {
  return chain.transposed_copy(is_complex_v<T>);
}

}  // namespace strop
