// Factorizations on the GPU (cuSOLVER batched SVDs) against the CPU path: same structure,
// same errors within rounding. Skipped when no CUDA device is visible.
#include <bit>

#include "gpu_reference.hpp"
#include "strop/factorize/factorize.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(gpu_factorize, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(butterfly_matches_cpu, T, ScalarTypes) {
  for (Index n : {16, 256, 2048}) {  // blocks from 2x2 (Jacobi batched) to 2x1024 (gesvda)
    const HostMatrix<T> W = hadamard_matrix<T>(n);
    const auto gpu = factorize_ks_chain(W, butterfly_patterns(n), {.device = Device::cuda});
    BOOST_TEST(gpu.report.relative_error <= exact_tolerance<T>(), "n=" << n);
  }
  const auto patterns = std::vector<KSPattern>{{1, 2, 3, 4}, {3, 2, 2, 2}, {6, 2, 1, 1}};
  const HostMatrix<T> W = KSChain<T>::random(patterns, rng()).to_dense();
  const auto cpu = factorize_ks_chain(W, patterns);
  const auto gpu = factorize_ks_chain(W, patterns, {.device = Device::cuda});
  BOOST_TEST(gpu.report.relative_error <= exact_tolerance<T>());
  BOOST_TEST(std::abs(gpu.report.relative_error - cpu.report.relative_error) <=
             exact_tolerance<T>());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(noisy_butterfly_matches_cpu, T, ScalarTypes) {
  const Index n = 512;
  HostMatrix<T> W = KSChain<T>::random(butterfly_patterns(n), rng()).to_dense();
  W += random_matrix<T>(n, n) * T(RealOf<T>(1e-2 * double(W.norm()) / double(n)));
  const auto cpu = factorize_ks_chain(W, butterfly_patterns(n));
  const auto gpu = factorize_ks_chain(W, butterfly_patterns(n), {.device = Device::cuda});
  BOOST_TEST(std::abs(gpu.report.relative_error - cpu.report.relative_error) <=
             1e-3 * cpu.report.relative_error + exact_tolerance<T>());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_matches_cpu, T, ScalarTypes) {
  for (auto [M, N, rb, cb, r] : {std::tuple<Index, Index, Index, Index, Index>{64, 64, 4, 4, 3},
                                 {256, 192, 4, 4, 8},
                                 {128, 256, 2, 8, 4}}) {
    const HostMatrix<T> exact = Monarch<T>::random(M, N, rb, cb, r, rng()).to_dense();
    const auto f = factorize_monarch(exact, rb, cb, r, {.device = Device::cuda});
    BOOST_TEST(f.report.relative_error <= 100 * exact_tolerance<T>(), M << "x" << N);
    const HostMatrix<T> W = random_matrix<T>(M, N);
    const auto cpu = factorize_monarch(W, rb, cb, r);
    const auto gpu = factorize_monarch(W, rb, cb, r, {.device = Device::cuda});
    BOOST_TEST(std::abs(gpu.report.relative_error - cpu.report.relative_error) <=
               1e-4 * cpu.report.relative_error);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(lowrank_and_kron_match_cpu, T, ScalarTypes) {
  const HostMatrix<T> W = random_matrix<T>(200, 120);
  for (Index rank : {1, 10, 60}) {
    const auto cpu = factorize_lowrank(W, {.rank = rank, .method = LowRankMethod::exact});
    const auto gpu = factorize_lowrank(
        W, {.rank = rank, .method = LowRankMethod::exact, .device = Device::cuda});
    BOOST_TEST(std::abs(gpu.report.relative_error - cpu.report.relative_error) <=
               1e-4 * cpu.report.relative_error);
  }
  const auto cpu = factorize_kron(W, 10, 8, {.terms = 3});
  const auto gpu = factorize_kron(W, 10, 8, {.terms = 3, .device = Device::cuda});
  BOOST_TEST(std::abs(gpu.report.relative_error - cpu.report.relative_error) <=
             1e-4 * cpu.report.relative_error);
}

BOOST_AUTO_TEST_SUITE_END()
