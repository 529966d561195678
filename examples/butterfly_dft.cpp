// Factorize the 1024-point DFT matrix into a butterfly (10 KS factors of 2x2 blocks) and
// check that the factorization is exact: the FFT, recovered from the dense matrix alone.
#include <complex>
#include <cstdio>
#include <numbers>

#include "strop/factorize/factorize.hpp"
#include "strop/strop.hpp"

using namespace strop;
using C = std::complex<double>;

int main() {
  const Index n = 1024;
  HostMatrix<C> F(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j)
      F(i, j) = std::polar(1.0, -2 * std::numbers::pi * double(i * j % n) / double(n));

  // The DFT is a butterfly once its columns are in bit-reversed order.
  KSFactorizeOptions options;
  options.column_permutation = bit_reversal_indices(n);
  const KSFactorization<C> fit = factorize_ks_chain(F, butterfly_patterns(n), options);

  // Undo the permutation so that the operator is F itself: F = chain * P^T.
  const AnyOperator<C> fft = fit.chain * Permutation<C>(options.column_permutation).transpose();
  const HostMatrix<C> x = HostMatrix<C>::Random(n, 4);
  const HostMatrix<C> y = fft * x;
  const double error = (y - F * x).norm() / (F * x).norm();
  std::printf("DFT-%lld as %zu butterfly factors: %lld parameters instead of %lld\n",
              static_cast<long long>(n), fit.chain.factors().size(),
              static_cast<long long>(fit.chain.parameter_count()), static_cast<long long>(n * n));
  std::printf("factorization error %.1e (took %.2f s), application error %.1e\n",
              fit.report.relative_error, fit.report.seconds, error);
  return error < 1e-12 ? 0 : 1;
}
