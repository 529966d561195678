#pragma once
// Nearest Kronecker product (Van Loan and Pitsianis): A ≈ Σ_{t<k} B_t ⊗ C_t with B_t m1 x n1
// and C_t (M/m1) x (N/n1). Rearranging A so that each Kronecker product becomes a rank-one
// matrix vec(B) vec(C)^T turns the problem into a truncated SVD, which is optimal.
#include <vector>

#include "strop/expr/any_operator.hpp"
#include "strop/expr/kron.hpp"
#include "strop/factorize/report.hpp"

namespace strop {

struct KronApproxOptions {
  Index terms = 1;  // k
  bool compute_error = true;
  Device device = Device::cpu;
};

template <class T>
struct KronFactorization {
  std::vector<HostMatrix<T>> left;   // B_t, m1 x n1
  std::vector<HostMatrix<T>> right;  // C_t, (M/m1) x (N/n1)
  std::vector<Kron<T>> terms;        // B_t ⊗ C_t as Dense factors
  AnyOperator<T> sum;                // Σ_t terms[t] (the single Kron when k = 1)
  FactorReport report;               // bound = the optimal error, which this attains
};

// ShapeError when m1 x n1 does not divide A's shape or terms < 1; NumericalError on NaN/Inf.
template <class T>
KronFactorization<T> factorize_kron(const HostMatrix<T>& A, Index m1, Index n1,
                                    const KronApproxOptions& options = {},
                                    Context& ctx = default_context());

}  // namespace strop
