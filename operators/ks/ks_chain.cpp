#include "strop/operators/ks_chain.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "operators/ks/ks_chain_steps.hpp"
#include "operators/ks/ks_device.hpp"
#include "operators/transforms/hadamard_host.hpp"
#if STROP_HAVE_CUDA
#include "operators/transforms/hadamard_device.hpp"
#endif
#include "strop/core/buffer.hpp"
#include "strop/operators/leaf_support.hpp"

namespace strop {

template <class T>
KSChain<T>::KSChain(std::vector<KSFactor<T>> factors) {
  require<PatternError>(!factors.empty(), "ks_chain: a chain needs at least one factor");
  for (std::size_t l = 0; l + 1 < factors.size(); ++l) {
    const KSPattern& p = factors[l].pattern();
    const KSPattern& q = factors[l + 1].pattern();
    require<PatternError>(connects(p, q), "ks_chain: factor ", l, " ", p, " (", p.rows(), "x",
                          p.cols(), ") does not connect to factor ", l + 1, " ", q, " (", q.rows(),
                          "x", q.cols(), "): need a_l c_l d_l == a_l+1 b_l+1 d_l+1");
  }
  factors_ = std::make_shared<const std::vector<KSFactor<T>>>(std::move(factors));
}

template <class T>
KSChain<T>::KSChain(std::vector<KSFactor<T>> factors, const detail::HadamardForm& form)
    : KSChain(std::move(factors)) {
  require<PatternError>(form.size() == rows() && rows() == cols(),
                        "ks_chain: a Hadamard form of size ", form.size(), " does not match a ",
                        rows(), "x", cols(), " chain");
  hadamard_form_ = form;
}

template <class T>
KSChain<T>::KSChain(std::vector<KSFactor<T>> factors, detail::FourierForm form)
    : KSChain(std::move(factors)) {
  require<PatternError>(form.n == rows() && rows() == cols() && form.input_order &&
                            Index(form.input_order->size()) == form.n && form.roots &&
                            Index(form.roots->size()) == form.n,
                        "ks_chain: a Fourier form of size ", form.n, " does not match a ", rows(),
                        "x", cols(), " chain");
  fourier_form_ = std::move(form);
}

template <class T>
KSChain<T> KSChain<T>::random(const std::vector<KSPattern>& patterns, std::mt19937& rng) {
  std::vector<KSFactor<T>> factors;
  factors.reserve(patterns.size());
  for (const KSPattern& p : patterns)
    factors.push_back(KSFactor<T>::random(p, rng));
  return KSChain(std::move(factors));
}

template <class T>
std::vector<KSPattern> KSChain<T>::patterns() const {
  std::vector<KSPattern> out;
  out.reserve(size());
  for (const KSFactor<T>& f : factors())
    out.push_back(f.pattern());
  return out;
}

template <class T>
KSChain<T> KSChain<T>::fused(std::size_t i) const {
  require<ShapeError>(i + 1 < size(), "ks_chain: cannot fuse factors ", i, " and ", i + 1,
                      " of a chain of ", size());
  const KSFactor<T>& left = factors()[i];
  const KSFactor<T>& right = factors()[i + 1];
  const KSPattern pattern = fuse(left.pattern(), right.pattern());
  const HostMatrix<T> product = left.to_dense() * right.to_dense();
  // Off the fused support the product holds exact zeros (chainability guarantees it), so
  // the smallest positive tolerance turns any violation into an error instead of a
  // silently dropped entry.
  const auto tolerance = std::numeric_limits<RealOf<T>>::min();
  std::vector<KSFactor<T>> out(factors().begin(), factors().begin() + i);
  out.push_back(KSFactor<T>::from_dense(pattern, product, tolerance));
  out.insert(out.end(), factors().begin() + i + 2, factors().end());
  return KSChain(std::move(out));
}

template <class T>
KSChain<T> KSChain<T>::transposed_copy(bool conjugate) const {
  std::vector<KSFactor<T>> out;
  out.reserve(size());
  for (auto f = factors().rbegin(); f != factors().rend(); ++f) {
    out.push_back(KSFactor<T>::transposed_copy(*f, conjugate));
  }
  if (!hadamard_form_) return KSChain(std::move(out));
  detail::HadamardForm form = *hadamard_form_;  // real values: conjugation changes nothing
  form.transposed = !form.transposed;
  return KSChain(std::move(out), form);
}

template <class T>
void KSChain<T>::apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                                 Context& ctx) const {
  const std::vector<KSFactor<T>>& fs = factors();
  const std::size_t count = fs.size();
  // A Hadamard transform needs no weights: on the host, the fast Walsh-Hadamard transform.
  if (hadamard_form_ && X.space == MemorySpace::Host)
    return detail::hadamard_host_apply(*hadamard_form_, op, X, Y, alpha, beta);
#if STROP_HAVE_CUDA
  if constexpr (std::is_same_v<T, float>) {
    // On the device its own kernel, bound by the signals' traffic.
    if (hadamard_form_ && X.space == MemorySpace::Device && ks_algorithm() == KSAlgorithm::Auto &&
        detail::hadamard_device_takes(*hadamard_form_, X, Y))
      return detail::hadamard_device_apply<float>(*hadamard_form_, op, X, Y, alpha, beta, ctx);
  }
#endif
  if (count == 1) return fs.front().apply_unchecked(op, X, Y, alpha, beta, ctx);
#if STROP_HAVE_CUDA
  if (X.space == MemorySpace::Device && ks_algorithm() == KSAlgorithm::Auto) {
    const std::vector<KSPattern> chain = patterns();
    if (detail::ks_chain_fusable(chain, sizeof(T)))
      return detail::ks_chain_fused_apply(chain, packed_device_values(ctx), op, X, Y, alpha, beta,
                                          ctx);
  }
#endif
  // K_1 ... K_L X runs right to left; op(K_1 ... K_L) X = op(K_L) ... op(K_1) X runs left
  // to right. Step s applies factor order[s].
  const bool forward = op != Op::NoTrans;
  auto factor_at = [&](std::size_t s) -> const KSFactor<T>& {
    return forward ? fs[s] : fs[count - 1 - s];
  };
  auto out_rows = [&](std::size_t s) {
    return forward ? factor_at(s).cols() : factor_at(s).rows();
  };
  detail::apply_in_turn(count, out_rows, X, Y, alpha, beta, ctx,
                        [&](std::size_t s, ConstView<T> in, MatrixView<T> out, T a, T b) {
                          factor_at(s).apply_unchecked(op, in, out, a, b, ctx);
                        });
}

template <class T>
const T* KSChain<T>::packed_device_values(Context& ctx) const {
  Index total = 0;
  for (const KSFactor<T>& f : factors())
    total += f.nnz();
  return packed_values_->get_or_make(total, ctx, [&] {
    std::vector<T> packed;
    packed.reserve(static_cast<std::size_t>(total));
    for (const KSFactor<T>& f : factors())
      packed.insert(packed.end(), f.values().begin(), f.values().end());
    return packed;
  });
}

template <class T>
double KSChain<T>::flops(Index batch) const {
  double total = 0;
  for (const KSFactor<T>& f : factors())
    total += f.flops(batch);
  return total;
}

template <class T>
Index KSChain<T>::parameter_count() const {
  Index total = 0;
  for (const KSFactor<T>& f : factors())
    total += f.parameter_count();
  return total;
}

#define STROP_INSTANTIATE(T) template class KSChain<T>;
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
