// A Monarch layer in place of a dense 1024 x 1024 layer: project trained-looking weights
// onto Monarch matrices of increasing rank and watch the error and the cost.
#include <cstdio>
#include <random>

#include "strop/factorize/factorize.hpp"
#include "strop/strop.hpp"

using namespace strop;

int main() {
  const Index n = 1024, batch = 64, blocks = 16;
  std::mt19937 rng(3);
  // Weights with block low-rank structure plus a little noise, as a trained layer might be.
  const HostMatrix<float> structure =
      Monarch<float>::random(n, n, blocks, blocks, 4, rng).to_dense();
  const HostMatrix<float> noise = HostMatrix<float>::Random(n, n);
  const HostMatrix<float> W = structure + (0.01f * structure.norm() / noise.norm()) * noise;
  const HostMatrix<float> x = HostMatrix<float>::Random(n, batch);
  const HostMatrix<float> y_dense = W * x;

  std::printf("%6s %12s %12s %14s\n", "rank", "parameters", "weight err", "output err");
  double last_error = 1;
  for (Index rank : {1, 2, 4, 8}) {
    const MonarchFactorization<float> fit = factorize_monarch(W, blocks, blocks, rank);
    const HostMatrix<float> y = fit.monarch * x;  // the layer's forward pass
    last_error = (y - y_dense).norm() / y_dense.norm();
    std::printf("%6lld %12lld %12.2e %14.2e\n", static_cast<long long>(rank),
                static_cast<long long>(fit.monarch.parameter_count()), fit.report.relative_error,
                last_error);
  }
  std::printf("dense layer: %lld parameters\n", static_cast<long long>(n * n));
  return last_error < 0.05 ? 0 : 1;  // rank 4 holds the structure; the 1 % noise remains
}
