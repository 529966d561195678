#include "strop/expr/simplify.hpp"

#include <optional>

#include "strop/expr/algebra.hpp"
#include "strop/expr/block_diag.hpp"
#include "strop/expr/kron.hpp"
#include "strop/expr/stack.hpp"
#include "strop/operators/identity.hpp"
#include "strop/operators/ks_chain.hpp"

namespace strop {
namespace {

template <class T>
using Any = AnyOperator<T>;

template <class T>
std::vector<Any<T>> simplify_all(const std::vector<Any<T>>& ops) {
  std::vector<Any<T>> out;
  out.reserve(ops.size());
  for (const auto& op : ops)
    out.push_back(simplify(op));
  return out;
}

// The KS chain an operator is, if it is a KS factor or chain.
template <class T>
std::optional<KSChain<T>> as_chain(const Any<T>& op) {
  if (const auto* chain = op.template as<KSChain<T>>()) return *chain;
  if (const auto* factor = op.template as<KSFactor<T>>()) return KSChain<T>({*factor});
  return std::nullopt;
}

// A rewrite is kept only where it costs no more to apply, as A and as A^T: (A ⊗ B)(C ⊗ D)
// costs more as (AC) ⊗ (BD) where C ⊗ D contracts and A ⊗ B expands (BD then runs on more
// slices), and a Kronecker product of KS factors can cost more as A^T once widened.
template <class T>
bool no_dearer(const Any<T>& rewritten, const Any<T>& original) {
  return rewritten.flops(1) <= original.flops(1) &&
         rewritten.transposed_flops(1) <= original.transposed_flops(1);
}

template <class T>
Any<T> simplify_product(const Any<T>& lhs, const Any<T>& rhs) {
  const auto* kl = lhs.template as<Kron<T>>();
  const auto* kr = rhs.template as<Kron<T>>();
  if (kl != nullptr && kr != nullptr && kl->factors().size() == kr->factors().size()) {
    bool aligned = true;
    for (std::size_t i = 0; i < kl->factors().size(); ++i) {
      aligned = aligned && kl->factors()[i].cols() == kr->factors()[i].rows();
    }
    if (aligned) {
      std::vector<Any<T>> factors;
      for (std::size_t i = 0; i < kl->factors().size(); ++i) {
        factors.push_back(simplify_product(kl->factors()[i], kr->factors()[i]));
      }
      Any<T> rewritten = Kron<T>(std::move(factors));
      if (no_dearer(rewritten, Any<T>(Product<Any<T>, Any<T>>(lhs, rhs)))) return rewritten;
    }
  }
  auto cl = as_chain(lhs);
  auto cr = as_chain(rhs);
  if (cl && cr) return *cl * *cr;
  return Product<Any<T>, Any<T>>(lhs, rhs);
}

// I_L ⊗ K ⊗ I_R of a KS factor (a,b,c,d) is the KS factor (L*a, b, c, d*R) with
// w'[l*a + i, k, m, j*R + r] = w[i, k, m, j] (the support's definition, indices expanded).
// The widened factor repeats K's values L R times. Nothing where that pattern's size
// overflows an index or its values pass kMaxWidenedValues (1 GiB of complex<double>): the
// Kronecker product, which applies without materialising them, then stays as it is.
constexpr Index kMaxWidenedValues = Index(1) << 26;

template <class T>
std::optional<KSFactor<T>> widened(const KSFactor<T>& K, Index L, Index R) {
  const KSPattern p = K.pattern();
  KSPattern q{1, p.b, p.c, 1};
  if (__builtin_mul_overflow(L, p.a, &q.a) || __builtin_mul_overflow(p.d, R, &q.d))
    return std::nullopt;
  try {
    q.validate();
  } catch (const PatternError&) {
    return std::nullopt;
  }
  if (q.nnz() > kMaxWidenedValues) return std::nullopt;
  std::vector<T> values(static_cast<std::size_t>(q.nnz()));
  std::size_t at = 0;
  for (Index i = 0; i < q.a; ++i)
    for (Index k = 0; k < q.b; ++k)
      for (Index m = 0; m < q.c; ++m)
        for (Index j = 0; j < q.d; ++j)
          values[at++] = K.value(i % p.a, k, m, j / R);
  return KSFactor<T>(q, std::move(values));
}

// A Kronecker product of KS factors and chains (and identities) is a KS chain, by the
// mixed-product rule F_1 ⊗ ... ⊗ F_n = prod_f (I_{L_f} ⊗ F_f ⊗ I_{R_f}) with L_f the
// columns of the factors before f and R_f the rows of those after it.
template <class T>
std::optional<KSChain<T>> kron_as_chain(const std::vector<Any<T>>& factors) {
  std::vector<std::optional<KSChain<T>>> chains;
  bool any_ks = false;
  for (const auto& f : factors) {
    if (f.rows() == 0 || f.cols() == 0) return std::nullopt;  // an empty operator: no KS pattern
    if (f.template as<Identity<T>>() != nullptr) {
      chains.emplace_back();
      continue;
    }
    chains.push_back(as_chain(f));
    if (!chains.back()) return std::nullopt;
    any_ks = true;
  }
  if (!any_ks) return std::nullopt;
  std::vector<KSFactor<T>> out;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    if (!chains[f]) continue;
    Index L = 1, R = 1;
    for (std::size_t g = 0; g < f; ++g)
      L *= factors[g].cols();
    for (std::size_t g = f + 1; g < factors.size(); ++g)
      R *= factors[g].rows();
    for (const KSFactor<T>& K : chains[f]->factors()) {
      std::optional<KSFactor<T>> wide = widened(K, L, R);
      if (!wide) return std::nullopt;
      out.push_back(*std::move(wide));
    }
  }
  return KSChain<T>(std::move(out));
}

template <class T, bool Conjugate>
Any<T> simplify_transposed(const Any<T>& inner) {
  // (A^T)^T and (A^H)^H; for real scalars ^T and ^H are the same.
  using Same = Transposed<Any<T>, Conjugate>;
  using Other = Transposed<Any<T>, !Conjugate>;
  if (const auto* t = inner.template as<Same>()) return t->inner();
  if constexpr (!is_complex_v<T>) {
    if (const auto* t = inner.template as<Other>()) return t->inner();
  }
  if (const auto* k = inner.template as<Kron<T>>()) {
    return simplify(Any<T>(Conjugate ? adjoint_of(*k) : transpose_of(*k)));
  }
  return Same(inner);
}

}  // namespace

template <class T>
AnyOperator<T> simplify(const AnyOperator<T>& op) {
  if (const auto* p = op.template as<Product<Any<T>, Any<T>>>()) {
    return simplify_product(simplify(p->lhs()), simplify(p->rhs()));
  }
  if (const auto* s = op.template as<Sum<Any<T>, Any<T>>>()) {
    return Sum<Any<T>, Any<T>>(simplify(s->lhs()), simplify(s->rhs()));
  }
  if (const auto* s = op.template as<Scaled<Any<T>>>()) {
    Any<T> inner = simplify(s->inner());
    T factor = s->factor();
    if (const auto* nested = inner.template as<Scaled<Any<T>>>()) {
      factor *= nested->factor();
      inner = nested->inner();
    }
    if (factor == T(1)) return inner;
    return Scaled<Any<T>>(factor, inner);
  }
  if (const auto* t = op.template as<Transposed<Any<T>, false>>()) {
    return simplify_transposed<T, false>(simplify(t->inner()));
  }
  if (const auto* t = op.template as<Transposed<Any<T>, true>>()) {
    return simplify_transposed<T, true>(simplify(t->inner()));
  }
  if (const auto* k = op.template as<Kron<T>>()) {
    auto factors = simplify_all(k->factors());
    Any<T> product = Kron<T>(factors);
    if (auto chain = kron_as_chain(factors)) {
      Any<T> rewritten = *std::move(chain);
      if (no_dearer(rewritten, product)) return rewritten;
    }
    return product;
  }
  if (const auto* b = op.template as<BlockDiag<T>>())
    return BlockDiag<T>(simplify_all(b->blocks()));
  if (const auto* v = op.template as<VStack<T>>()) return VStack<T>(simplify_all(v->parts()));
  if (const auto* h = op.template as<HStack<T>>()) return HStack<T>(simplify_all(h->parts()));
  return op;  // a leaf
}

#define STROP_INSTANTIATE(T) template AnyOperator<T> simplify(const AnyOperator<T>& op);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
