// The planner's run-time rewrites give the same operator, with the expected structure.
#include <random>

#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(simplify_rewrites)

BOOST_AUTO_TEST_CASE_TEMPLATE(kron_mixed_product, T, ScalarTypes) {
  // C ⊗ D expands (6 -> 20 values a signal) and A ⊗ B contracts (20 -> 4): (AC) ⊗ (BD) skips
  // the 20-value intermediate, 196 flops a signal (real) against 288, and 164 against 252 as
  // A^T.
  const Dense<T> A(random_matrix<T>(2, 5)), B(random_matrix<T>(2, 4)), C(random_matrix<T>(5, 3)),
      D(random_matrix<T>(4, 2));
  const AnyOperator<T> before = kron(A, B) * kron(C, D);
  const AnyOperator<T> after = simplify(before);
  BOOST_TEST(after.node_type() == std::string("kron"));
  BOOST_TEST(after.children()[0].node_type() == std::string("product"));
  BOOST_TEST(after.flops(1) < before.flops(1));
  BOOST_TEST(after.transposed_flops(1) < before.transposed_flops(1));
  check_against_dense(after, before.to_dense());
  // Factors that do not line up stay a product (A 2x5 * E 10x.., B 2x4 * F 2x..).
  const Dense<T> E(random_matrix<T>(10, 2)), F(random_matrix<T>(2, 5));
  const AnyOperator<T> misaligned = kron(A, B) * kron(E, F);  // (4x20)(20x10)
  BOOST_TEST(simplify(misaligned).node_type() == std::string("product"));
  check_against_dense(simplify(misaligned), misaligned.to_dense());
}

using KronKSTypes = boost::mpl::list<double, std::complex<float>>;

// A Kronecker product of KS factors, chains and identities stays KS: one chain with each
// factor widened to I_L ⊗ K ⊗ I_R (rectangular factors, a > 1 and d > 1 included).
BOOST_AUTO_TEST_CASE_TEMPLATE(kron_of_ks_factors_is_a_ks_chain, T, KronKSTypes) {
  std::mt19937 gen(17);
  const auto K1 = KSFactor<T>::random({2, 3, 2, 1}, gen);  // 6 x 4
  const auto K2 = KSFactor<T>::random({1, 2, 3, 2}, gen);  // 4 x 6
  const KSChain<T> chain(
      {KSFactor<T>::random({1, 2, 2, 2}, gen), KSFactor<T>::random({2, 2, 2, 1}, gen)});  // 4 x 4
  const AnyOperator<T> before = kron(K1, Identity<T>(3), chain, K2);
  const AnyOperator<T> after = simplify(before);
  const auto* as_chain = after.template as<KSChain<T>>();
  BOOST_REQUIRE(as_chain != nullptr);
  BOOST_TEST(as_chain->factors().size() == 4u);  // K1, the chain's two, K2
  check_against_dense(
      after,
      kron_dense(kron_dense(kron_dense(K1.to_dense(), HostMatrix<T>(HostMatrix<T>::Identity(3, 3))),
                            chain.to_dense()),
                 K2.to_dense()));
  // Any other factor keeps the Kronecker product.
  const AnyOperator<T> mixed = kron(K1, Dense<T>(random_matrix<T>(2, 2)));
  BOOST_TEST(simplify(mixed).node_type() == std::string("kron"));
}

// A rewrite that would cost more flops, as A or as A^T, is not made.
BOOST_AUTO_TEST_CASE(rewrites_that_cost_more_are_not_made) {
  // (A ⊗ B)(C ⊗ D) with C ⊗ D contracting (1x64) and A ⊗ B expanding (32x1): 224 flops a
  // signal as it is, 448 as (AC) ⊗ (BD), whose BD runs on 8 slices instead of 1.
  const Dense<double> A(random_matrix<double>(4, 1)), B(random_matrix<double>(8, 1)),
      C(random_matrix<double>(1, 8)), D(random_matrix<double>(1, 8));
  const AnyOperator<double> product = kron(A, B) * kron(C, D);
  const AnyOperator<double> kept = simplify(product);
  BOOST_TEST(kept.node_type() == std::string("product"));
  BOOST_TEST(kept.flops(1) <= product.flops(1));
  check_against_dense(kept, product.to_dense());
  // KS (2,2,3,1) ⊗ KS (1,3,2,2): as one chain its A^T costs 288 flops a signal, as the
  // Kronecker product 192.
  std::mt19937 gen(1);
  const AnyOperator<double> k = kron(KSFactor<double>::random({2, 2, 3, 1}, gen),
                                     KSFactor<double>::random({1, 3, 2, 2}, gen));
  const AnyOperator<double> simple = simplify(k);
  BOOST_TEST(simple.node_type() == std::string("kron"));
  BOOST_TEST(simple.transposed_flops(1) <= k.transposed_flops(1));
}

BOOST_AUTO_TEST_CASE(a_kron_too_large_to_widen_stays_a_kron) {
  // I_{2^60} ⊗ K widens K (1,4,4,1) to (2^60,4,4,1), whose nnz wraps to 0: its values were
  // written past an empty vector (SIGSEGV). At 2^58 they fit an index but not a vector.
  std::mt19937 gen(3);
  const auto K = KSFactor<double>::random({1, 4, 4, 1}, gen);
  for (int log2 : {60, 58}) {
    const AnyOperator<double> k = kron(Identity<double>(Index(1) << log2), K);
    AnyOperator<double> simple = k;
    BOOST_REQUIRE_NO_THROW(simple = simplify(k));
    BOOST_TEST(simple.node_type() == std::string("kron"));
    BOOST_TEST(simple.rows() == k.rows());
  }
  // 4 values repeated 2^32 times would be 2^34 (std::bad_alloc): left as a Kron too.
  const AnyOperator<double> wide =
      kron(Identity<double>(Index(1) << 16), KSFactor<double>::random({1, 2, 2, 1}, gen),
           Identity<double>(Index(1) << 16));
  BOOST_TEST(simplify(wide).node_type() == std::string("kron"));
  // The same product at a size that fits is widened into a chain.
  const AnyOperator<double> small = kron(Identity<double>(8), K);
  BOOST_TEST(simplify(small).node_type() == std::string("ks_chain"));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(kron_transposes_and_double_transposes, T, ScalarTypes) {
  const Dense<T> A(random_matrix<T>(2, 3)), B(random_matrix<T>(4, 2));
  const AnyOperator<T> k = kron(A, B);
  const AnyOperator<T> t = Transposed<AnyOperator<T>, false>(k);
  const AnyOperator<T> h = Transposed<AnyOperator<T>, true>(k);
  BOOST_TEST(simplify(t).node_type() == std::string("kron"));
  BOOST_TEST(simplify(h).node_type() == std::string("kron"));
  check_against_dense(simplify(t), t.to_dense());
  check_against_dense(simplify(h), h.to_dense());
  const AnyOperator<T> a = A;
  // (Wrapping the inner node in an AnyOperator first: same-type construction would copy.)
  const AnyOperator<T> ta = Transposed<AnyOperator<T>, false>(a);
  const AnyOperator<T> ha = Transposed<AnyOperator<T>, true>(a);
  const AnyOperator<T> tt = Transposed<AnyOperator<T>, false>(ta);
  BOOST_TEST(simplify(tt).template as<Dense<T>>() != nullptr);
  const AnyOperator<T> hh = Transposed<AnyOperator<T>, true>(ha);
  BOOST_TEST(simplify(hh).template as<Dense<T>>() != nullptr);
  // ^T of ^H is conj, not A: it must not be removed for complex scalars.
  const AnyOperator<T> th = Transposed<AnyOperator<T>, false>(ha);
  BOOST_TEST((simplify(th).template as<Dense<T>>() != nullptr) == !is_complex_v<T>);
  check_against_dense(simplify(th), th.to_dense());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(scalars_fold_and_ks_products_join, T, ScalarTypes) {
  std::mt19937 gen(7);
  const auto patterns = butterfly_patterns(8);
  const KSFactor<T> K1 = KSFactor<T>::random(patterns[0], gen);
  const KSFactor<T> K2 = KSFactor<T>::random(patterns[1], gen);
  const KSFactor<T> K3 = KSFactor<T>::random(patterns[2], gen);
  const T s = random_scalar<T>(), t = random_scalar<T>();
  // Built through AnyOperator so that the compile-time rewrites do not apply.
  const AnyOperator<T> k1 = K1, k2 = K2, k3 = K3;
  const AnyOperator<T> chain =
      Product<AnyOperator<T>, AnyOperator<T>>(Product<AnyOperator<T>, AnyOperator<T>>(k1, k2), k3);
  const AnyOperator<T> scaled = Scaled<AnyOperator<T>>(s, Scaled<AnyOperator<T>>(t, chain));
  const AnyOperator<T> simple = simplify(scaled);
  BOOST_TEST(simple.node_type() == std::string("scaled"));
  const auto* folded = simple.template as<Scaled<AnyOperator<T>>>();
  BOOST_REQUIRE(folded != nullptr);
  // One product of the two factors (measured: exact for every scalar type).
  BOOST_TEST(std::abs(folded->factor() - s * t) <= 4 * ScalarTraits<T>::epsilon * std::abs(s * t));
  const auto* joined = folded->inner().template as<KSChain<T>>();
  BOOST_REQUIRE(joined != nullptr);
  BOOST_TEST(joined->size() == 3u);
  check_against_dense(simple, scaled.to_dense());
  BOOST_TEST(simplify(AnyOperator<T>(Scaled<AnyOperator<T>>(T(1), k1))).node_type() ==
             std::string("ks_factor"));
}

BOOST_AUTO_TEST_SUITE_END()
