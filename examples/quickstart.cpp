// The README's first expression, as a program (built and run by CTest as a smoke test).
#include <cstdio>

#include "strop/factorize/factorize.hpp"
#include "strop/strop.hpp"

using namespace strop;

int main() {
  std::mt19937 rng(0);
  const Index n = 1024;
  auto H = KSChain<float>::random(butterfly_patterns(n), rng);  // a butterfly
  auto M = Monarch<float>::random(n, n, 32, 32, 1, rng);        // block low-rank
  Dense<float> D(HostMatrix<float>::Random(32, 32));
  auto A = 0.5f * H * M.transpose() + kron(D, D);  // nothing computed yet

  HostMatrix<float> X = HostMatrix<float>::Random(n, 256);  // 256 signals
  HostMatrix<float> Y = A * X;                              // evaluated here (CPU)
  apply(A, view(X), view(Y), 2.0f, 1.0f);                   // Y = 2 A X + Y

  // Check against the dense matrix the expression stands for: Y = 3 A X.
  const HostMatrix<float> dense = A.to_dense();
  const float error = (Y - 3.0f * dense * X).norm() / (3.0f * dense * X).norm();
  std::printf("expression %lldx%lld, %lld parameters, relative error %.2e\n",
              static_cast<long long>(A.rows()), static_cast<long long>(A.cols()),
              static_cast<long long>(A.parameter_count()), error);

  AnyOperator<float> any = A;  // type-erased run-time graph (same leaves)
  auto fit = factorize_ks_chain(dense, butterfly_patterns(n));
  std::printf("nearest butterfly: relative error %.3f with %lld parameters\n",
              fit.report.relative_error, static_cast<long long>(fit.chain.parameter_count()));
  auto simpler = simplify(any);  // planner rewrites: (A⊗B)(C⊗D) = AC⊗BD, ...
  std::printf("simplified root node: %s\n", simpler.node_type());

  if (cuda_available()) {
    DeviceMatrix<float> Xd = to_device(X, Layout::RowMajor);
    DeviceMatrix<float> Yd = kron(D, D).transpose() * Xd;  // on the GPU
    const HostMatrix<float> expected = kron(D, D).transpose() * X;
    std::printf("GPU kron^T: relative error %.2e\n",
                (Yd.to_host() - expected).norm() / expected.norm());
  }
  return error < 1e-4f ? 0 : 1;
}
