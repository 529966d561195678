// Fast transforms and permutations on the GPU against the CPU path (itself tested against
// naive transforms and FFTW in tests/unit/test_transforms.cpp): the chains go through the
// fused multi-factor kernel where they fit, the digit reversal through the row gather.
#include "gpu_reference.hpp"
#include "operators/ks/ks_device.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
using DftTypes = boost::mpl::list<std::complex<float>, std::complex<double>>;
}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_transforms, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(permutation_gathers_rows, T, ScalarTypes) {
  std::mt19937 gen(23);
  std::vector<Index> perm(37);
  std::iota(perm.begin(), perm.end(), Index(0));
  std::shuffle(perm.begin(), perm.end(), gen);
  // Exact: a permutation only moves values (alpha and beta add one rounding each).
  check_gpu_against_cpu(Permutation<T>(perm), 9);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hadamard_and_dct_on_the_device, T, ScalarTypes) {
  for (Index n : {256, 1024, 12 * 64, 28 * 16}) {
    for (int factors : {0, kFullRadix2Chain}) {
      BOOST_TEST_CONTEXT("n = " << n << ", factors " << factors) {
        const KSChain<T> h = hadamard<T>(n, {Normalization::Orthonormal, factors});
        // H_28's radix is above the fused kernel's 16: that one goes factor by factor.
        BOOST_TEST(detail::ks_chain_fusable(h.patterns(), sizeof(T)) == (n != 28 * 16));
        check_gpu_against_cpu(h, 19, 50 * tolerance<T>(n));
        if (n == 12 * 64 || n == 28 * 16) continue;  // the DCT needs n = m 2^k, m odd
        check_gpu_against_cpu(dct<T>(n, {Normalization::Orthonormal, factors}), 19,
                              50 * tolerance<T>(n));
        check_gpu_against_cpu(inverse_dct<T>(n, {Normalization::Orthonormal, factors}), 19,
                              50 * tolerance<T>(n));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dft_on_the_device, T, DftTypes) {
  for (Index n : {64, 1024, 3 * 128}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      check_gpu_against_cpu(dft<T>(n, {Normalization::Orthonormal}), 21, 50 * tolerance<T>(n));
      check_gpu_against_cpu(inverse_dft<T>(n, {Normalization::Orthonormal}), 21,
                            50 * tolerance<T>(n));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
