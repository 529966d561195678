#pragma once
// Test helpers: random data and the one check every operator goes through: its
// application, in every form, against the dense matrix it must represent.
#include <algorithm>
#include <bit>
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>
#include <complex>
#include <cstdlib>
#include <numbers>
#include <random>

#include "strop/strop.hpp"

namespace strop::testing {

using ScalarTypes = boost::mpl::list<float, double, std::complex<float>, std::complex<double>>;
using RealTypes = boost::mpl::list<float, double>;

// A count a test takes from the environment variable `name` for a longer run (at least 1), or
// `default_count` where it is not set.
inline int count_from_environment(const char* name, int default_count) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::max(1, std::atoi(text)) : default_count;
}

inline std::mt19937& rng() {
  static std::mt19937 engine(20261122);
  return engine;
}

template <class T>
T random_scalar() {
  std::normal_distribution<double> normal;
  if constexpr (is_complex_v<T>) {
    return T(RealOf<T>(normal(rng())), RealOf<T>(normal(rng())));
  } else {
    return T(normal(rng()));
  }
}

template <class T>
HostMatrix<T> random_matrix(Index rows, Index cols) {
  HostMatrix<T> m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i)
      m(i, j) = random_scalar<T>();
  return m;
}

inline Index random_index(Index lo, Index hi) {
  return std::uniform_int_distribution<Index>(lo, hi)(rng());
}

// Runs call(), which must throw ErrorType with `expected` in its message.
template <class ErrorType, class Call>
void check_error_mentions(Call call, const std::string& expected) {
  try {
    call();
    BOOST_ERROR("expected an error mentioning '" << expected << "'");
  } catch (const ErrorType& e) {
    BOOST_TEST(std::string(e.what()).find(expected) != std::string::npos, "message: " << e.what());
  }
}

// Relative tolerance for a result with `depth` accumulated products of length `inner`:
// loose enough for rounding, tight enough to catch a wrong index or a missing term.
template <class T>
double tolerance(Index inner = 64) {
  const double eps = ScalarTraits<T>::epsilon;
  return 50.0 * eps * std::sqrt(double(std::max<Index>(inner, 1)));
}

template <class T>
double relative_error(const HostMatrix<T>& got, const HostMatrix<T>& expected) {
  const double denom = std::max<double>(expected.norm(), 1e-30);
  return double((got - expected).norm()) / denom;
}

// Known transforms, built densely from their closed forms, and the tolerance of an
// exact factorization.
template <class T>
double exact_tolerance() {
  return std::is_same_v<RealOf<T>, double> ? 1e-12 : 1e-5;
}

// F[j, k] = exp(-2 pi i j k / n).
template <class T>
HostMatrix<T> dft_matrix(Index n) {
  HostMatrix<T> f(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index k = 0; k < n; ++k) {
      const double angle = -2.0 * std::numbers::pi * double((j * k) % n) / double(n);
      f(j, k) = T(RealOf<T>(std::cos(angle)), RealOf<T>(std::sin(angle)));
    }
  return f;
}

// H[j, k] = (-1)^{popcount(j & k)} (Sylvester order).
template <class T>
HostMatrix<T> hadamard_matrix(Index n) {
  HostMatrix<T> h(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index k = 0; k < n; ++k)
      h(j, k) = T(std::popcount(static_cast<std::uint64_t>(j & k)) % 2 ? -1 : 1);
  return h;
}

// The Kronecker product a ⊗ b, formed densely.
template <class T>
HostMatrix<T> kron_dense(const HostMatrix<T>& a, const HostMatrix<T>& b) {
  HostMatrix<T> k(a.rows() * b.rows(), a.cols() * b.cols());
  for (Index i = 0; i < a.rows(); ++i)
    for (Index j = 0; j < a.cols(); ++j)
      k.block(i * b.rows(), j * b.cols(), b.rows(), b.cols()) = a(i, j) * b;
  return k;
}

// op(D) for a dense matrix.
template <class T>
HostMatrix<T> op_of(const HostMatrix<T>& d, Op op) {
  switch (op) {
    case Op::NoTrans:
      return d;
    case Op::Trans:
      return d.transpose();
    case Op::Adjoint:
      return d.adjoint();
  }
  return d;
}

// The inputs and expected output of one application Y = alpha D X + beta Y0 of a dense `d` to
// `batch` random signals: "plain" is alpha = 1, beta = 0 with Y0 all NaN (Y must not be read),
// otherwise alpha, beta and Y0 are random.
template <class T>
struct ApplicationCase {
  T alpha, beta;
  HostMatrix<T> x, y0, expected;
};
template <class T>
ApplicationCase<T> application_case(const HostMatrix<T>& d, Index batch, bool plain) {
  ApplicationCase<T> c{plain ? T(1) : random_scalar<T>(),
                       plain ? T(0) : random_scalar<T>(),
                       random_matrix<T>(d.cols(), batch),
                       random_matrix<T>(d.rows(), batch),
                       {}};
  if (plain) {
    c.y0.setConstant(T(std::numeric_limits<RealOf<T>>::quiet_NaN()));
    c.expected = d * c.x;
  } else {
    c.expected = c.alpha * (d * c.x) + c.beta * c.y0;
  }
  return c;
}

// Applies `A` in both layouts, as A, A^T and A^H, with (alpha, beta) = (1, 0) and random
// values, to random batches, and compares with the same arithmetic on `dense`.
template <class E, class T = typename E::Scalar>
void check_against_dense(const E& A, const HostMatrix<T>& dense, double tol = -1,
                         Index batch = -1) {
  BOOST_REQUIRE_EQUAL(A.rows(), dense.rows());
  BOOST_REQUIRE_EQUAL(A.cols(), dense.cols());
  if (tol < 0) tol = tolerance<T>(std::max(dense.rows(), dense.cols()));
  if (batch < 0) batch = random_index(1, 9);
  using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (Op op : {Op::NoTrans, Op::Trans, Op::Adjoint}) {
    const HostMatrix<T> d = op_of(dense, op);
    for (bool row_major : {false, true}) {
      for (bool plain : {true, false}) {
        const auto [alpha, beta, x, y0, expected] = application_case(d, batch, plain);
        HostMatrix<T> got;
        if (row_major) {
          const RowMajorMatrix xr = x;
          RowMajorMatrix yr = y0;
          A.apply(op, view(xr), view(yr), alpha, beta);
          got = yr;
        } else {
          HostMatrix<T> y = y0;
          A.apply(op, view(x), view(y), alpha, beta);
          got = y;
        }
        BOOST_TEST_CONTEXT(
            A.rows() << "x" << A.cols() << " " << to_string(op) << " "
                     << (row_major ? "RowMajor" : "ColMajor") << " B=" << batch
                     << (plain ? " alpha=1 beta=0 (Y poisoned with NaN)" : " random alpha, beta")) {
          BOOST_TEST(got.allFinite());
          BOOST_TEST(relative_error(got, expected) <= tol);
        }
      }
    }
  }
}

}  // namespace strop::testing
