#include "strop/operators/ks_chain.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "operators/ks/ks_chain_steps.hpp"
#include "operators/ks/ks_device.hpp"
#include "operators/transforms/hadamard_host.hpp"
#if STROP_HAVE_CUDA
#include "operators/transforms/hadamard_device.hpp"
#endif
#include "strop/core/buffer.hpp"
#include "strop/operators/leaf_support.hpp"
#include "strop/operators/permutation.hpp"

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
  // The chain is applied from the form alone: H_m's signs come from a table of orders up to
  // 28 (another m reads past it or gives a wrong matrix), and the scale multiplies every output.
  require<PatternError>(form.m == 1 || form.m == 12 || form.m == 20 || form.m == 28,
                        "ks_chain: a Hadamard form's odd order m must be 1, 12, 20 or 28, got ",
                        form.m);
  require<PatternError>(
      form.log2_pow2 >= 0 && form.log2_pow2 < 63 && form.size() >> form.log2_pow2 == form.m,
      "ks_chain: a Hadamard form of size ", form.m, " * 2^", form.log2_pow2, " is out of range");
  require<NumericalError>(std::isfinite(form.scale), "ks_chain: a Hadamard form's scale is ",
                          form.scale, " (not finite)");
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
  require<PatternError>(form.sign == 1 || form.sign == -1,
                        "ks_chain: a Fourier form's sign must be +1 or -1, got ", form.sign);
  require<NumericalError>(std::isfinite(form.scale), "ks_chain: a Fourier form's scale is ",
                          form.scale, " (not finite)");
  (void)Permutation<T>(*form.input_order);  // PatternError unless a permutation of 0..n-1
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

namespace {
// The values of left * right on the pattern f = fuse(p, q) of their patterns: one
// multiply-add per pair of nonzeros that meet on the shared index, where the dense n x n
// product takes O(n^3) time and O(n^2) memory. Chainability (a_p | a_q, d_q | d_p,
// a_q | a_p c_p) puts every such product on f's support, so none is dropped.
template <class T>
std::vector<T> fused_values(const KSFactor<T>& left, const KSFactor<T>& right, const KSPattern& f) {
  const auto [a1, b1, c1, d1] = left.pattern();
  const auto [a2, b2, c2, d2] = right.pattern();
  std::vector<T> out(static_cast<std::size_t>(f.nnz()), T(0));
  for (Index i = 0; i < a1; ++i)
    for (Index k = 0; k < b1; ++k)
      for (Index l = 0; l < c1; ++l)
        for (Index j = 0; j < d1; ++j) {
          const T w = left.value(i, k, l, j);
          // Left's column = right's row m, split as right's (i2, k2, j2).
          const Index m = (i * c1 + l) * d1 + j;
          const Index i2 = m / (b2 * d2), k2 = m / d2 % b2, j2 = m % d2;
          // The output row (i, k, j) in f's split (i, kf, j2); f.d = d2.
          const Index kf = (k * d1 + j) / d2;
          for (Index l2 = 0; l2 < c2; ++l2) {
            const Index lf = (i2 * c2 + l2) % f.c;  // the output column's digit
            out[static_cast<std::size_t>(((i * f.b + kf) * f.c + lf) * f.d + j2)] +=
                w * right.value(i2, k2, l2, j2);
          }
        }
  return out;
}
}  // namespace

template <class T>
KSChain<T> KSChain<T>::fused(std::size_t i) const {
  // Not i + 1 < size(): i + 1 wraps at SIZE_MAX.
  require<ShapeError>(size() >= 2 && i <= size() - 2, "ks_chain: cannot fuse factor ", i,
                      " with the next one: the chain has ", size(), " factors");
  const KSFactor<T>& left = factors()[i];
  const KSFactor<T>& right = factors()[i + 1];
  const KSPattern pattern = fuse(left.pattern(), right.pattern());
  std::vector<KSFactor<T>> out(factors().begin(), factors().begin() + i);
  out.emplace_back(pattern, fused_values(left, right, pattern));
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
