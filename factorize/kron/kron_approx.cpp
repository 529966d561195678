// Nearest Kronecker sum by the Van Loan–Pitsianis rearrangement: R(A) has one row per entry
// (i1, j1) of B and one column per entry (i2, j2) of C, R[(i1,j1),(i2,j2)] =
// A(i1 m2 + i2, j1 n2 + j2), so that R(B ⊗ C) = vec(B) vec(C)^T.
#include <chrono>
#include <cmath>

#include "factorize/common/checks.hpp"
#include "factorize/common/scaling.hpp"
#include "factorize/svd/block_svd.hpp"
#include "strop/expr/algebra.hpp"
#include "strop/factorize/kron_approx.hpp"
#include "strop/operators/dense.hpp"

namespace strop {

template <class T>
KronFactorization<T> factorize_kron(const HostMatrix<T>& A, Index m1, Index n1,
                                    const KronApproxOptions& options, Context& ctx) {
  const RealOf<T> largest = detail::require_finite_matrix("factorize_kron", A);
  require<ShapeError>(m1 >= 1 && n1 >= 1 && A.rows() % m1 == 0 && A.cols() % n1 == 0,
                      "factorize_kron: a ", m1, "x", n1, " left factor does not divide the ",
                      A.rows(), "x", A.cols(), " matrix");
  const Index m2 = A.rows() / m1, n2 = A.cols() / n1;
  const Index k = options.terms;
  require<ShapeError>(k >= 1 && k <= std::min(m1 * n1, m2 * n2), "factorize_kron: ", k,
                      " terms requested; between 1 and ", std::min(m1 * n1, m2 * n2),
                      " are possible for these factor shapes");
  detail::require_device("factorize_kron", options.device);
  const detail::DeviceScope device_scope(options.device == Device::cuda);

  const auto start = std::chrono::steady_clock::now();
  const detail::UnitScaled<T> scaled(A, largest);
  const HostMatrix<T>& W = scaled.matrix();
  const Index rows = m1 * n1, cols = m2 * n2;
  std::vector<T> r(static_cast<std::size_t>(rows * cols));
  for (Index j1 = 0; j1 < n1; ++j1)
    for (Index i1 = 0; i1 < m1; ++i1)
      for (Index j2 = 0; j2 < n2; ++j2)
        for (Index i2 = 0; i2 < m2; ++i2)
          r[static_cast<std::size_t>((i1 + j1 * m1) + (i2 + j2 * m2) * rows)] =
              W(i1 * m2 + i2, j1 * n2 + j2);
  detail::BlockSvd<T> svd = detail::block_svd(r, 1, rows, cols, k, options.device, ctx);
  detail::distribute_singular_values(svd, 0.5);
  const int e = scaled.exponent();
  detail::scale_by_power_of_two(svd.u.data(), Index(svd.u.size()), detail::exponent_share(e, 0, 2));
  detail::scale_by_power_of_two(svd.vh.data(), Index(svd.vh.size()),
                                detail::exponent_share(e, 1, 2));

  std::vector<HostMatrix<T>> left, right;
  std::vector<Kron<T>> terms;
  for (Index t = 0; t < k; ++t) {
    HostMatrix<T> b(m1, n1), c(m2, n2);
    for (Index j1 = 0; j1 < n1; ++j1)
      for (Index i1 = 0; i1 < m1; ++i1)
        b(i1, j1) = svd.u[static_cast<std::size_t>(i1 + j1 * m1 + t * rows)];
    for (Index j2 = 0; j2 < n2; ++j2)
      for (Index i2 = 0; i2 < m2; ++i2)
        c(i2, j2) = svd.vh[static_cast<std::size_t>(t + (i2 + j2 * m2) * k)];
    terms.push_back(kron(Dense<T>(b), Dense<T>(c)));
    left.push_back(std::move(b));
    right.push_back(std::move(c));
  }
  AnyOperator<T> sum = terms.front();
  for (std::size_t t = 1; t < terms.size(); ++t)
    sum = AnyOperator<T>(sum + AnyOperator<T>(terms[t]));
  KronFactorization<T> out{std::move(left), std::move(right), std::move(terms), sum, {}};
  FactorReport& report = out.report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.parameters = k * (m1 * n1 + m2 * n2);
  report.method = "nearest kronecker sum";
  report.bound = report.lower_bound =
      std::sqrt(svd.dropped.front()) / std::max(double(W.norm()), 1e-300);
  if (options.compute_error) report.relative_error = detail::relative_error(A, out.sum);
  return out;
}

#define STROP_INSTANTIATE(T)                                                       \
  template KronFactorization<T> factorize_kron(const HostMatrix<T>&, Index, Index, \
                                               const KronApproxOptions&, Context&);
STROP_FOR_EACH_SCALAR(STROP_INSTANTIATE)

}  // namespace strop
