// A fast Walsh-Hadamard transform of noisy signals: strop::hadamard(n) is a KS chain of
// log2(n) / 2 radix-4 factors (or, with TransformOptions::factors = kFullRadix2Chain, the
// butterfly of 2 x 2 blocks [[1, 1], [1, -1]] / sqrt(2)). Applying it costs O(n log n)
// multiply-adds per signal instead of n^2; orthonormal, its transpose inverts it.
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>

#include "strop/strop.hpp"

using namespace strop;

int main() {
  const Index n = 1024, signals = 16;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 0.1);
  HostMatrix<double> x(n, signals);  // a square wave per signal, plus noise
  for (Index s = 0; s < signals; ++s)
    for (Index i = 0; i < n; ++i)
      x(i, s) = ((i / (16 << (s % 4))) % 2 ? 1.0 : -1.0) + noise(rng);

  const KSChain<double> H = hadamard<double>(n, {Normalization::Orthonormal});
  const HostMatrix<double> spectrum = H * x;
  const HostMatrix<double> back = H.transpose() * spectrum;

  // The naive O(n^2) transform as the reference: H[i][j] = (-1)^popcount(i & j) / sqrt(n).
  HostMatrix<double> naive = HostMatrix<double>::Zero(n, signals);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j)
      naive.row(i) += (std::popcount(std::uint64_t(i & j)) % 2 ? -1.0 : 1.0) * x.row(j);
  naive /= std::sqrt(double(n));

  const double error = (spectrum - naive).norm() / naive.norm();
  const double round_trip = (back - x).norm() / x.norm();
  Index largest = 0;
  spectrum.col(0).cwiseAbs().maxCoeff(&largest);
  std::printf("Walsh-Hadamard transform of %lld signals of %lld samples\n",
              static_cast<long long>(signals), static_cast<long long>(n));
  std::printf(
      "vs naive transform: %.1e, inverse round trip: %.1e, strongest sequency of "
      "signal 0: %lld\n",
      error, round_trip, static_cast<long long>(largest));
  return error < 1e-12 && round_trip < 1e-12 ? 0 : 1;
}
