// Fast transforms (Hadamard, DFT, DCT) as KS chains: against naive O(n^2) transforms in
// double precision built from their definitions, against FFTW when it was found at build
// time, as inverses of each other, and as ordinary operators inside expressions.
#include <Eigen/LU>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "reference.hpp"
#include "sanitizers.hpp"
#include "strop/io/hdf5.hpp"

#if STROP_HAVE_FFTW
#include <fftw3.h>
#endif

namespace {

using namespace strop;
using namespace strop::testing;
using ComplexTypes = boost::mpl::list<std::complex<float>, std::complex<double>>;

// Factor counts every test runs through: default, 1..4 fused factors, the full radix-2 chain.
const int kFactorChoices[] = {0, 1, 2, 3, 4, kFullRadix2Chain};

// Sizes: powers of two, and m 2^k with odd m (dft, dct) or m in {12, 20, 28} (Hadamard).
const Index kFourierSizes[] = {1, 2, 4, 8, 32, 256, 3, 12, 20, 28, 96, 160, 7 * 16};
const Index kHadamardSizes[] = {1, 2, 4, 16, 128, 12, 24, 20, 80, 28, 112};

// X_k = sum_j x_j cos(pi k (2j + 1) / 2n), the plain DCT-II sums, in double.
HostMatrix<double> dct_sums(Index n) {
  HostMatrix<double> c(n, n);
  for (Index k = 0; k < n; ++k)
    for (Index j = 0; j < n; ++j)
      c(k, j) = std::cos(std::numbers::pi * double(k * (2 * j + 1) % (4 * n)) / double(2 * n));
  return c;
}

// The normalized DCT-II as Normalization describes it.
HostMatrix<double> dct_reference(Index n, Normalization norm) {
  HostMatrix<double> c = dct_sums(n);
  if (norm != Normalization::Orthonormal) return 2.0 * c;
  for (Index k = 0; k < n; ++k)
    c.row(k) *= std::sqrt((k == 0 ? 1.0 : 2.0) / double(n));
  return c;
}

template <class T>
HostMatrix<T> cast_to(const HostMatrix<double>& m) {
  return m.cast<T>();
}
template <class T>
HostMatrix<T> cast_to(const HostMatrix<std::complex<double>>& m) {
  if constexpr (is_complex_v<T>) {
    return m.cast<T>();
  } else {
    return m.real().cast<T>();
  }
}

// H_m ⊗ H_{2^k}, the definition hadamard(n) follows, with Sylvester's H_{2^k}.
HostMatrix<double> hadamard_reference(Index n) {
  for (Index m : {Index(12), Index(20), Index(28)})
    if (n % m == 0 && ((n / m) & (n / m - 1)) == 0)
      return kron_dense(small_hadamard_matrix<double>(m), hadamard_matrix<double>(n / m));
  return hadamard_matrix<double>(n);
}

template <class T>
double dense_error(const HostMatrix<T>& got, const HostMatrix<double>& expected) {
  return relative_error<std::complex<double>>(got.template cast<std::complex<double>>(),
                                              expected.cast<std::complex<double>>());
}
template <class T>
double dense_error(const HostMatrix<T>& got, const HostMatrix<std::complex<double>>& expected) {
  return relative_error<std::complex<double>>(got.template cast<std::complex<double>>(), expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transforms)

// ---- Hadamard ----

BOOST_AUTO_TEST_CASE(small_hadamard_matrices_are_orthogonal) {
  for (Index m : {1, 2, 4, 8, 12, 20, 28}) {
    const HostMatrix<double> h = small_hadamard_matrix<double>(m);
    BOOST_TEST_CONTEXT("m = " << m) {
      BOOST_TEST((h.array().abs() == 1.0).all());
      BOOST_TEST((h * h.transpose() - double(m) * HostMatrix<double>::Identity(m, m)).norm() ==
                 0.0);
    }
  }
  BOOST_CHECK_THROW(small_hadamard_matrix<double>(36), PatternError);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hadamard_matches_its_definition, T, ScalarTypes) {
  for (Index n : kHadamardSizes)
    for (int factors : kFactorChoices) {
      const KSChain<T> h = hadamard<T>(n, {Normalization::Backward, factors});
      BOOST_TEST_CONTEXT("n = " << n << ", factors = " << factors) {
        // Exact: every product is a sum of +-1 values.
        BOOST_TEST(dense_error(h.to_dense(), hadamard_reference(n)) == 0.0);
      }
    }
  // Every op and layout, with the orthonormal scaling.
  const Index n = 48;
  const HostMatrix<double> expected = hadamard_reference(n) / std::sqrt(double(n));
  check_against_dense(hadamard<T>(n, {Normalization::Orthonormal, 2}), cast_to<T>(expected));
}

// The dense matrix a HadamardForm describes: scale (H_m ⊗ H_{2^k}), transposed if marked.
HostMatrix<double> form_matrix(const detail::HadamardForm& form) {
  const HostMatrix<double> h =
      form.scale * kron_dense(small_hadamard_matrix<double>(form.m),
                              hadamard_matrix<double>(Index(1) << form.log2_pow2));
  return form.transposed ? HostMatrix<double>(h.transpose()) : h;
}

// The chain's matrix from its factors' values (to_dense() would apply the form).
template <class T>
HostMatrix<T> product_of_factors(const KSChain<T>& chain) {
  HostMatrix<T> out = chain.factors().front().to_dense();
  for (std::size_t f = 1; f < chain.size(); ++f)
    out = out * chain.factors()[f].to_dense();
  return out;
}

BOOST_AUTO_TEST_CASE(hadamard_chains_carry_a_form_that_matches_their_values) {
  // A chain from hadamard() is applied from its form, not its values: they must agree for
  // every size, grouping, scaling and direction, and for the transposed copy.
  for (Index n : kHadamardSizes)
    for (int factors : kFactorChoices)
      for (Normalization norm :
           {Normalization::Backward, Normalization::Orthonormal, Normalization::None})
        for (bool inverse : {false, true}) {
          const KSChain<double> h = inverse ? inverse_hadamard<double>(n, {norm, factors})
                                            : hadamard<double>(n, {norm, factors});
          BOOST_TEST_CONTEXT("n = " << n << ", factors " << factors << ", " << to_string(norm)
                                    << (inverse ? ", inverse" : "")) {
            BOOST_REQUIRE(h.hadamard_form().has_value());
            BOOST_TEST(h.hadamard_form()->size() == n);
            BOOST_TEST(dense_error(product_of_factors(h), form_matrix(*h.hadamard_form())) <=
                       1e-15);
            const KSChain<double> t = transpose_of(h);
            BOOST_REQUIRE(t.hadamard_form().has_value());
            BOOST_TEST(dense_error(product_of_factors(t), form_matrix(*t.hadamard_form())) <=
                       1e-15);
          }
        }
  // Chains made otherwise carry none, even when they hold the same values.
  const KSChain<double> full = hadamard<double>(64, {Normalization::Backward, kFullRadix2Chain});
  BOOST_TEST(!full.fused(0).hadamard_form().has_value());
  BOOST_TEST(!(full * full).hadamard_form().has_value());
  BOOST_TEST(!KSChain<double>(full.factors()).hadamard_form().has_value());
  BOOST_CHECK_THROW(KSChain<double>(full.factors(), detail::HadamardForm{1, 5}), PatternError);
}

BOOST_AUTO_TEST_CASE(forms_that_do_not_describe_a_transform_are_refused) {
  // The chain is applied from its form alone. m = 32 read past the 28-entry table of H_m's
  // signs, m = 3 gave a matrix of ones, and a NaN scale was taken.
  const KSChain<double> h32 = hadamard<double>(32);
  const KSChain<double> dense96 = KSChain<double>::random(dense_patterns(96, 96), rng());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(KSChain<double>(h32.factors(), detail::HadamardForm{32, 0}), PatternError);
  BOOST_CHECK_THROW(KSChain<double>(dense96.factors(), detail::HadamardForm{3, 5}), PatternError);
  BOOST_CHECK_THROW(KSChain<double>(h32.factors(), detail::HadamardForm{1, -1}), PatternError);
  BOOST_CHECK_THROW(KSChain<double>(h32.factors(), detail::HadamardForm{1, 5, nan}),
                    NumericalError);
  BOOST_CHECK_NO_THROW(KSChain<double>(h32.factors(), detail::HadamardForm{1, 5, 0.5}));
  BOOST_CHECK_NO_THROW(KSChain<double>(dense96.factors(), detail::HadamardForm{12, 3}));
  // The same for a DFT's form: its sign, scale and input order.
  using C = std::complex<double>;
  const KSChain<C> f = dft<C>(8).lhs();
  BOOST_REQUIRE(f.fourier_form().has_value());
  const detail::FourierForm good = *f.fourier_form();
  BOOST_CHECK_NO_THROW(KSChain<C>(f.factors(), good));
  detail::FourierForm bad = good;
  bad.sign = 2;
  BOOST_CHECK_THROW(KSChain<C>(f.factors(), bad), PatternError);
  bad = good;
  bad.scale = nan;
  BOOST_CHECK_THROW(KSChain<C>(f.factors(), bad), NumericalError);
  bad = good;
  bad.input_order = std::make_shared<const std::vector<Index>>(8, Index(0));
  BOOST_CHECK_THROW(KSChain<C>(f.factors(), bad), PatternError);
}

BOOST_AUTO_TEST_CASE(half_signals_through_a_float_chain_on_the_host) {
  // Computed in float, rounded once: within a unit of roundoff of the float result.
  const KSChain<float> h = hadamard<float>(12 * 16, {Normalization::Orthonormal});
  const HostMatrix<half> x = random_matrix<float>(h.cols(), 6).cast<half>();
  HostMatrix<half> y(h.rows(), 6);
  apply_reduced_precision(h, Op::Trans, view(x), view(y), 2.0f, 0.0f);
  HostMatrix<float> expected(h.rows(), 6);
  h.apply(Op::Trans, view(HostMatrix<float>(x.cast<float>())), view(expected), 2.0f, 0.0f);
  BOOST_TEST(relative_error(HostMatrix<float>(y.cast<float>()), expected) <= unit_roundoff_v<half>);
  BOOST_CHECK_THROW(apply_reduced_precision<half>(h, Op::NoTrans, view(y), view(y)), ShapeError);
}

BOOST_AUTO_TEST_CASE(hadamard_factor_counts) {
  BOOST_TEST(hadamard<float>(1024, {Normalization::Backward, kFullRadix2Chain}).size() == 10u);
  BOOST_TEST(hadamard<float>(1024, {Normalization::Backward, 3}).size() == 3u);
  BOOST_TEST(hadamard<float>(1024).size() == std::size_t(default_transform_factors(1024)));
  // The H_m factor stands alone, in front: pattern (1, m, m, 2^k).
  const KSChain<float> h = hadamard<float>(12 * 64, {Normalization::Backward, 2});
  BOOST_TEST(h.size() == 3u);
  BOOST_TEST(h.factors().front().pattern() == (KSPattern{1, 12, 12, 64}));
}

BOOST_AUTO_TEST_CASE(grouped_chain_is_the_fused_full_chain) {
  // Grouping radix-2 stages = fusing consecutive factors of the full chain (for Hadamard
  // the factor values agree too, not only the products).
  const KSChain<double> full = hadamard<double>(64, {Normalization::Backward, kFullRadix2Chain});
  const KSChain<double> grouped = hadamard<double>(64, {Normalization::Backward, 2});
  const KSChain<double> fused = full.fused(0).fused(0).fused(1).fused(1);
  BOOST_REQUIRE(fused.patterns() == grouped.patterns());
  for (std::size_t f = 0; f < fused.size(); ++f)
    BOOST_TEST(fused.factors()[f].values() == grouped.factors()[f].values());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hadamard_inverts, T, ScalarTypes) {
  for (Index n : {Index(16), Index(24), Index(20 * 8), Index(28 * 4)})
    for (Normalization norm :
         {Normalization::Backward, Normalization::Orthonormal, Normalization::None}) {
      const HostMatrix<T> x = random_matrix<T>(n, 3);
      const HostMatrix<T> back = inverse_hadamard<T>(n, {norm, 2}) * (hadamard<T>(n, {norm}) * x);
      const double gain = norm == Normalization::None ? double(n) : 1.0;
      BOOST_TEST_CONTEXT("n = " << n << ", " << to_string(norm)) {
        BOOST_TEST(relative_error<T>(back, HostMatrix<T>(T(RealOf<T>(gain)) * x)) <=
                   exact_tolerance<T>());
      }
    }
}

// ---- DFT ----

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_matches_the_naive_transform, T, ComplexTypes) {
  for (Index n : kFourierSizes)
    for (int factors : kFactorChoices) {
      BOOST_TEST_CONTEXT("n = " << n << ", factors = " << factors) {
        const auto f = dft<T>(n, {Normalization::Backward, factors});
        BOOST_TEST(dense_error(f.to_dense(), dft_matrix<std::complex<double>>(n)) <=
                   exact_tolerance<T>());
        const auto g = inverse_dft<T>(n, {Normalization::None, factors});
        const HostMatrix<std::complex<double>> conj_f =
            dft_matrix<std::complex<double>>(n).conjugate();
        BOOST_TEST(dense_error(g.to_dense(), conj_f) <= exact_tolerance<T>());
      }
    }
  // Every op and layout on one mixed-radix size.
  const Index n = 40;
  check_against_dense(dft<T>(n, {Normalization::Orthonormal, 2}),
                      cast_to<T>(HostMatrix<std::complex<double>>(
                          dft_matrix<std::complex<double>>(n) / std::sqrt(double(n)))));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_chain_values_match_the_fft, T, ComplexTypes) {
  // dft() products run as one Stockham FFT from the chain's form (the tests above); the
  // chain's own factors, which derived chains, files and other paths use, must hold the same
  // transform. Checked here from the factor matrices, independently of any fast path.
  for (Index n : kFourierSizes)
    for (int factors : kFactorChoices)
      for (bool inverse : {false, true}) {
        const auto f = inverse ? inverse_dft<T>(n, {Normalization::Orthonormal, factors})
                               : dft<T>(n, {Normalization::Orthonormal, factors});
        BOOST_TEST_CONTEXT("n = " << n << ", factors " << factors << (inverse ? ", inverse" : "")) {
          BOOST_REQUIRE(f.lhs().fourier_form().has_value());
          HostMatrix<std::complex<double>> expected =
              dft_matrix<std::complex<double>>(n) / std::sqrt(double(n));
          if (inverse) expected = expected.conjugate().eval();
          const HostMatrix<T> from_factors = product_of_factors(f.lhs()) * f.rhs().to_dense();
          BOOST_TEST(dense_error(from_factors, expected) <= exact_tolerance<T>());
          BOOST_TEST(dense_error(f.to_dense(), expected) <= exact_tolerance<T>());
        }
      }
  // Only the chain's own digit reversal (or an equal one) makes the product an FFT: another
  // permutation, or a chain without the form, takes the factor by factor path.
  const Index n = 48;
  const auto f = dft<T>(n);
  const HostMatrix<T> chain = product_of_factors(f.lhs());
  std::vector<Index> reversed(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i)
    reversed[std::size_t(i)] = n - 1 - i;
  const Permutation<T> other(reversed);
  const HostMatrix<T> x = random_matrix<T>(n, 3);
  const HostMatrix<T> via_other = Product<KSChain<T>, Permutation<T>>(f.lhs(), other) * x;
  BOOST_TEST(relative_error<T>(via_other, HostMatrix<T>(chain * (other.to_dense() * x))) <=
             tolerance<T>(n));
  const Permutation<T> equal_copy(f.rhs().indices());
  const HostMatrix<T> via_copy = Product<KSChain<T>, Permutation<T>>(f.lhs(), equal_copy) * x;
  BOOST_TEST(dense_error(via_copy, HostMatrix<std::complex<double>>(
                                       dft_matrix<std::complex<double>>(n) *
                                       x.template cast<std::complex<double>>())) <=
             exact_tolerance<T>());
  BOOST_TEST(!KSChain<T>(f.lhs().factors()).fourier_form().has_value());
  BOOST_TEST(!f.lhs().fused(0).fourier_form().has_value());
  BOOST_TEST(!transpose_of(f.lhs()).fourier_form().has_value());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_chain_structure, T, ComplexTypes) {
  // 2^10: the full chain is the square dyadic butterfly with the bit reversal.
  const auto f = dft<T>(1024, {Normalization::Backward, kFullRadix2Chain});
  BOOST_TEST(f.lhs().patterns() == butterfly_patterns(1024));
  BOOST_TEST(f.rhs().indices() == Permutation<T>::bit_reversal(1024).indices());
  // 12 * 2^6 = 3 * 2^8 in 3 + 1 factors: (1,3,3,256), then radices 8, 8, 4.
  const auto g = dft<T>(12 * 64, {Normalization::Backward, 3});
  const std::vector<KSPattern> expected = {
      {1, 3, 3, 256}, {3, 8, 8, 32}, {24, 8, 8, 4}, {192, 4, 4, 1}};
  BOOST_TEST(g.lhs().patterns() == expected);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_inverts_under_each_normalization, T, ComplexTypes) {
  for (Index n : {Index(64), Index(48), Index(7 * 32)})
    for (Normalization norm :
         {Normalization::Backward, Normalization::Orthonormal, Normalization::None}) {
      const HostMatrix<T> x = random_matrix<T>(n, 4);
      const HostMatrix<T> back = inverse_dft<T>(n, {norm, 3}) * (dft<T>(n, {norm}) * x);
      const double gain = norm == Normalization::None ? double(n) : 1.0;
      BOOST_TEST_CONTEXT("n = " << n << ", " << to_string(norm)) {
        BOOST_TEST(relative_error<T>(back, HostMatrix<T>(T(RealOf<T>(gain)) * x)) <=
                   exact_tolerance<T>());
      }
    }
  // Orthonormal: the inverse is the adjoint.
  const Index n = 32;
  const HostMatrix<T> f = dft<T>(n, {Normalization::Orthonormal}).to_dense();
  BOOST_TEST(relative_error<T>(HostMatrix<T>(f.adjoint()),
                               inverse_dft<T>(n, {Normalization::Orthonormal}).to_dense()) <=
             exact_tolerance<T>());
}

// ---- DCT ----

BOOST_AUTO_TEST_CASE_TEMPLATE(dct_matches_the_naive_transform, T, ScalarTypes) {
  for (Index n : kFourierSizes)
    for (int factors : kFactorChoices)
      for (Normalization norm : {Normalization::Backward, Normalization::Orthonormal}) {
        BOOST_TEST_CONTEXT("n = " << n << ", factors = " << factors << ", " << to_string(norm)) {
          const TransformOptions options{norm, factors};
          const HostMatrix<double> c = dct_reference(n, norm);
          BOOST_TEST(dense_error(dct<T>(n, options).to_dense(), c) <= exact_tolerance<T>());
          BOOST_TEST(dense_error(inverse_dct<T>(n, options).to_dense(),
                                 HostMatrix<double>(c.inverse())) <= exact_tolerance<T>());
        }
      }
  const Index n = 24;
  check_against_dense(dct<T>(n), cast_to<T>(dct_reference(n, Normalization::Backward)));
  check_against_dense(
      inverse_dct<T>(n, {Normalization::Orthonormal, 2}),
      cast_to<T>(HostMatrix<double>(dct_reference(n, Normalization::Orthonormal).transpose())));
}

BOOST_AUTO_TEST_CASE(dct_inverse_without_scaling_is_redft01) {
  // y_j = X_0 + 2 sum_{k>0} X_k cos(pi k (2j+1) / 2n): dct then this gives 2n x.
  const Index n = 20;
  HostMatrix<double> redft01 = 2.0 * dct_sums(n).transpose();
  redft01.col(0) /= 2.0;
  BOOST_TEST(dense_error(inverse_dct<double>(n, {Normalization::None}).to_dense(), redft01) <=
             1e-12);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dct_inverts_under_each_normalization, T, ScalarTypes) {
  for (Index n : {Index(128), Index(40), Index(5 * 64)})
    for (Normalization norm :
         {Normalization::Backward, Normalization::Orthonormal, Normalization::None}) {
      const HostMatrix<T> x = random_matrix<T>(n, 3);
      const HostMatrix<T> back = inverse_dct<T>(n, {norm, 2}) * (dct<T>(n, {norm, 4}) * x);
      const double gain = norm == Normalization::None ? 2.0 * double(n) : 1.0;
      BOOST_TEST_CONTEXT("n = " << n << ", " << to_string(norm)) {
        BOOST_TEST(relative_error<T>(back, HostMatrix<T>(T(RealOf<T>(gain)) * x)) <=
                   exact_tolerance<T>());
      }
    }
}

// ---- in expressions ----

BOOST_AUTO_TEST_CASE_TEMPLATE(transforms_compose_like_any_operator, T, ComplexTypes) {
  // dft * inverse_dft = I; kron(H_4, DCT_8); a run-time AnyOperator; a scaled sum.
  const Index n = 24;
  const AnyOperator<T> round_trip = dft<T>(n) * inverse_dft<T>(n);
  check_against_dense(round_trip, HostMatrix<T>(HostMatrix<T>::Identity(n, n)));
  const HostMatrix<double> k =
      kron_dense(hadamard_matrix<double>(4), dct_reference(8, Normalization::Backward));
  check_against_dense(kron(hadamard<T>(4), dct<T>(8)), cast_to<T>(k));
  const AnyOperator<T> any = make_transform<T>(TransformKind::Dft, n, false);
  const HostMatrix<std::complex<double>> f2 = dft_matrix<std::complex<double>>(n) * 2.0 -
                                              hadamard_reference(n).cast<std::complex<double>>();
  check_against_dense(T(2) * any - hadamard<T>(n), cast_to<T>(f2));
}

BOOST_AUTO_TEST_CASE(transforms_save_and_load) {
  const std::string path = "transforms_save_and_load.h5";
  const AnyOperator<std::complex<double>> f =
      dft<std::complex<double>>(96, {Normalization::Orthonormal, 2});
  io::save(path, f, "dft96");
  const AnyOperator<std::complex<double>> back = io::load<std::complex<double>>(path, "dft96");
  // The file holds the chain's values, bit for bit; the loaded product applies them factor by
  // factor (a file carries no Fourier form), the original as one FFT: equal up to rounding.
  BOOST_TEST(relative_error<std::complex<double>>(back.to_dense(), f.to_dense()) <= 1e-14);
  const auto* chain = back.children().front().as<KSChain<std::complex<double>>>();
  BOOST_REQUIRE(chain != nullptr);
  BOOST_TEST(!chain->fourier_form().has_value());
  const auto original = dft<std::complex<double>>(96, {Normalization::Orthonormal, 2});
  for (std::size_t l = 0; l < chain->size(); ++l)
    BOOST_TEST(chain->factors()[l].values() == original.lhs().factors()[l].values());
  std::remove(path.c_str());
}

// ---- bad input ----

BOOST_AUTO_TEST_CASE(unsupported_sizes_and_names_are_typed_errors) {
  BOOST_CHECK_THROW(hadamard<float>(0), PatternError);
  BOOST_CHECK_THROW(hadamard<float>(36), PatternError);
  BOOST_CHECK_THROW(hadamard<float>(12 * 3), PatternError);
  BOOST_CHECK_THROW(dft<std::complex<float>>(0), PatternError);
  BOOST_CHECK_THROW(dft<std::complex<float>>(65 * 4), PatternError);  // odd part 65 > 63
  BOOST_CHECK_THROW(dct<float>(-8), PatternError);
  BOOST_CHECK_THROW(dct<float>(8, {Normalization::Backward, -1}), PatternError);
  // An unknown normalization (a cast integer) picked a scaling silently.
  const TransformOptions unknown{static_cast<Normalization>(7), 0};
  BOOST_CHECK_THROW(hadamard<float>(8, unknown), PatternError);
  BOOST_CHECK_THROW(dft<std::complex<float>>(8, unknown), PatternError);
  BOOST_CHECK_THROW(inverse_dft<std::complex<float>>(8, unknown), PatternError);
  BOOST_CHECK_THROW(dct<float>(8, unknown), PatternError);
  BOOST_CHECK_THROW(inverse_dct<float>(8, unknown), PatternError);
  BOOST_CHECK_THROW(inverse_hadamard<float>(8, unknown), PatternError);
  BOOST_CHECK_THROW(make_transform<float>(TransformKind::Dft, 8, false), PatternError);
  BOOST_CHECK_THROW(parse_transform_kind("fft"), PatternError);
  BOOST_CHECK_THROW(parse_normalization("unitary"), PatternError);
  BOOST_TEST((parse_transform_kind("dct") == TransformKind::Dct));
  BOOST_TEST((parse_normalization("ortho") == Normalization::Orthonormal));
  BOOST_TEST(hadamard_size_supported(28 * 1024));
  BOOST_TEST(!hadamard_size_supported(9 * 1024));  // 3 * 1024 = 12 * 256 is supported
  BOOST_TEST(fourier_size_supported(3 * 1024));
  // A wrong signal length is the usual ShapeError of any operator.
  const HostMatrix<float> x = HostMatrix<float>::Ones(7, 2);
  HostMatrix<float> y(8, 2);
  BOOST_CHECK_THROW(dct<float>(8).apply(Op::NoTrans, view(x), view(y)), ShapeError);
}

// ---- FFTW ----
#if STROP_HAVE_FFTW

namespace {
// FFTW's unnormalized transforms of each column, in double.
enum class FftwKind { Forward, Backward, Redft10, Redft01 };
HostMatrix<std::complex<double>> fftw_columns(const HostMatrix<std::complex<double>>& x,
                                              FftwKind kind) {
  const int n = int(x.rows());
  HostMatrix<std::complex<double>> y(x.rows(), x.cols());
  std::vector<double> in(std::size_t(2 * n)), out(std::size_t(2 * n));
  for (Index s = 0; s < x.cols(); ++s) {
    fftw_plan plan;
    if (kind == FftwKind::Forward || kind == FftwKind::Backward) {
      auto* i = reinterpret_cast<fftw_complex*>(in.data());
      auto* o = reinterpret_cast<fftw_complex*>(out.data());
      plan = fftw_plan_dft_1d(n, i, o, kind == FftwKind::Forward ? FFTW_FORWARD : FFTW_BACKWARD,
                              FFTW_ESTIMATE);
      for (int t = 0; t < n; ++t) {
        in[2 * t] = x(t, s).real();
        in[2 * t + 1] = x(t, s).imag();
      }
      fftw_execute(plan);
      for (int t = 0; t < n; ++t)
        y(t, s) = {out[2 * t], out[2 * t + 1]};
    } else {
      plan =
          fftw_plan_r2r_1d(n, in.data(), out.data(),
                           kind == FftwKind::Redft10 ? FFTW_REDFT10 : FFTW_REDFT01, FFTW_ESTIMATE);
      for (int t = 0; t < n; ++t)
        in[t] = x(t, s).real();
      fftw_execute(plan);
      for (int t = 0; t < n; ++t)
        y(t, s) = out[t];
    }
    fftw_destroy_plan(plan);
  }
  return y;
}
}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_matches_fftw, T, ComplexTypes) {
  for (Index n : {Index(1024), Index(4096), Index(12 * 256), Index(28 * 128), Index(5 * 512)})
    for (int factors : {0, 2, kFullRadix2Chain}) {
      const HostMatrix<T> x = random_matrix<T>(n, 3);
      const HostMatrix<std::complex<double>> xd = x.template cast<std::complex<double>>();
      BOOST_TEST_CONTEXT("n = " << n << ", factors = " << factors) {
        const HostMatrix<T> y = dft<T>(n, {Normalization::Backward, factors}) * x;
        BOOST_TEST(dense_error(y, fftw_columns(xd, FftwKind::Forward)) <= exact_tolerance<T>());
        const HostMatrix<T> z = inverse_dft<T>(n, {Normalization::None, factors}) * x;
        BOOST_TEST(dense_error(z, fftw_columns(xd, FftwKind::Backward)) <= exact_tolerance<T>());
      }
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dct_matches_fftw, T, RealTypes) {
  for (Index n : {Index(1024), Index(2048), Index(20 * 64), Index(3 * 256)})
    for (int factors : {0, 3, kFullRadix2Chain}) {
      const HostMatrix<T> x = random_matrix<T>(n, 3);
      const HostMatrix<std::complex<double>> xd = x.template cast<std::complex<double>>();
      BOOST_TEST_CONTEXT("n = " << n << ", factors = " << factors) {
        const HostMatrix<T> y = dct<T>(n, {Normalization::Backward, factors}) * x;
        BOOST_TEST(dense_error(y, fftw_columns(xd, FftwKind::Redft10)) <= exact_tolerance<T>());
        const HostMatrix<T> z = inverse_dct<T>(n, {Normalization::None, factors}) * x;
        BOOST_TEST(dense_error(z, fftw_columns(xd, FftwKind::Redft01)) <= exact_tolerance<T>());
      }
    }
}

#endif  // STROP_HAVE_FFTW

BOOST_AUTO_TEST_CASE(sizes_whose_factors_overflow_an_index_are_typed_errors) {
  // a*r*r*d wrapped to 0: an empty value vector written out of bounds (SIGSEGV).
  BOOST_CHECK_THROW(hadamard<float>(Index(1) << 62), PatternError);
  BOOST_CHECK_THROW(inverse_hadamard<double>(Index(1) << 62), PatternError);
  // A table of n (or more) entries was made before the factors' sizes were checked:
  // std::length_error (or bad_alloc) instead of a PatternError.
  BOOST_CHECK_THROW(dft<std::complex<float>>(Index(1) << 62), PatternError);
  BOOST_CHECK_THROW(inverse_dft<std::complex<double>>(Index(1) << 62), PatternError);
  BOOST_CHECK_THROW(dft<std::complex<float>>(Index(3) << 61), PatternError);
  BOOST_CHECK_THROW(dct<float>(Index(1) << 62), PatternError);
  BOOST_CHECK_THROW(inverse_dct<double>(Index(1) << 62), PatternError);
  BOOST_CHECK_THROW(dct<float>(Index(1) << 60), PatternError);  // only the real factors overflow
  BOOST_CHECK_THROW(hadamard<float>(Index(1) << 40, {Normalization::Backward, 1}), PatternError);
}

BOOST_AUTO_TEST_CASE(sizes_beyond_host_memory_are_shape_errors,
                     *boost::unit_test::precondition(FailedAllocationsThrow())) {
  // Factors whose sizes fit an index but whose tables no host memory holds: they escaped as
  // std::length_error or std::bad_alloc. Nothing is allocated for real: beyond PTRDIFF_MAX
  // bytes the factories refuse up front; beyond 2^57 bytes (more than x86-64 maps) the
  // allocation fails at once.
  using C = std::complex<float>;
  // 30 radix-4 factors of 2^62 complex values (16 bytes each, as built).
  check_error_mentions<ShapeError>(
      [] { dft<C>(Index(1) << 60); },
      "dft(1152921504606846976)'s largest factor: 4611686018427387904 values "
      "(73786976294838206464 bytes) do not fit in host memory");
  check_error_mentions<ShapeError>([] { inverse_dft<std::complex<double>>(Index(3) << 58); },
                                   "inverse_dft(864691128455135232)'s largest factor");
  // Largest factor 2^56 values (2^60 bytes), under PTRDIFF_MAX: the first table of n roots
  // (2^58 bytes) fails to allocate.
  check_error_mentions<ShapeError>(
      [] { dft<C>(Index(1) << 54); },
      "dft(18014398509481984)'s largest factor: 72057594037927936 values "
      "(1152921504606846976 bytes) do not fit in host memory");
  // The real factors of the DCT are 4 times its complex ones.
  check_error_mentions<ShapeError>(
      [] { dct<float>(Index(1) << 58); },
      "dct(288230376151711744)'s largest factor: 4611686018427387904 values");
  check_error_mentions<ShapeError>(
      [] { inverse_dct<double>(Index(1) << 54); },
      "inverse_dct(18014398509481984)'s largest factor: 288230376151711744 values "
      "(4611686018427387904 bytes) do not fit in host memory");
  check_error_mentions<ShapeError>(
      [] { hadamard<float>(Index(1) << 60); },
      "hadamard(1152921504606846976)'s largest factor: 4611686018427387904 values");
  const TransformOptions one_factor{Normalization::Backward, 1};  // one 2^31 x 2^31 block
  check_error_mentions<ShapeError>(
      [&] { inverse_hadamard<double>(Index(1) << 31, one_factor); },
      "inverse_hadamard(2147483648)'s largest factor: 4611686018427387904 values");
  check_error_mentions<ShapeError>(
      [] { make_transform<float>(TransformKind::Hadamard, Index(3) << 53, false); },
      "hadamard(27021597764222976)");
  check_error_mentions<ShapeError>(
      [] { small_hadamard_matrix<float>(Index(1) << 31); },
      "hadamard matrix of order 2147483648: 4611686018427387904 entries "
      "(36893488147419103232 bytes) do not fit in host memory");
  check_error_mentions<ShapeError>([] { small_hadamard_matrix<double>(Index(1) << 40); },
                                   "1099511627776x1099511627776 elements overflow a 64-bit count");
}

BOOST_AUTO_TEST_SUITE_END()
