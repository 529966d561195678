// Expression nodes and rewrites against the dense arithmetic they stand for.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "reference.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(algebra)

BOOST_AUTO_TEST_CASE_TEMPLATE(products_sums_and_scaling, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(5, 4), b = random_matrix<T>(4, 6),
                      c = random_matrix<T>(5, 6);
  const Dense<T> A(a), B(b), C(c);
  const T s = random_scalar<T>(), t = random_scalar<T>();
  check_against_dense(A * B, HostMatrix<T>(a * b));
  check_against_dense(A * B + C, HostMatrix<T>(a * b + c));
  check_against_dense(A * B - C, HostMatrix<T>(a * b - c));
  check_against_dense(s * (A * B) + C * t, HostMatrix<T>(s * (a * b) + c * t));
  check_against_dense(-C, HostMatrix<T>(-c));
  check_against_dense(A * B * Identity<T>(6), HostMatrix<T>(a * b));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(transposes_and_adjoints, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(5, 4), b = random_matrix<T>(4, 6);
  const Dense<T> A(a), B(b);
  check_against_dense(A.transpose(), HostMatrix<T>(a.transpose()));
  check_against_dense(A.adjoint(), HostMatrix<T>(a.adjoint()));
  check_against_dense((A * B).transpose(), HostMatrix<T>((a * b).transpose()));
  check_against_dense((A * B).adjoint() + B.adjoint() * A.adjoint(),
                      HostMatrix<T>(2 * (a * b).adjoint()));
  // Mixed transposes: (A^T)^H = conj(A), evaluated through the conjugation path.
  check_against_dense(A.transpose().adjoint(), HostMatrix<T>(a.conjugate()));
  check_against_dense(A.adjoint().transpose(), HostMatrix<T>(a.conjugate()));
  check_against_dense(Transposed<Transposed<Dense<T>, false>, true>(A.transpose()),
                      HostMatrix<T>(a.conjugate()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(kron_of_operators, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(2, 3), b = random_matrix<T>(4, 2),
                      c = random_matrix<T>(3, 3);
  const Dense<T> A(a), B(b), C(c);
  check_against_dense(kron(A, B), kron_dense(a, b));
  check_against_dense(kron(A, B, C), kron_dense(kron_dense(a, b), c));
  check_against_dense(kron(A), a);
  // Factors that are themselves expressions.
  check_against_dense(kron(A * C, B.transpose()),
                      kron_dense(HostMatrix<T>(a * c), HostMatrix<T>(b.transpose())));
  check_against_dense(kron(Identity<T>(3), B, Identity<T>(2)),
                      kron_dense(kron_dense(HostMatrix<T>(HostMatrix<T>::Identity(3, 3)), b),
                                 HostMatrix<T>(HostMatrix<T>::Identity(2, 2))));
  BOOST_TEST(kron(A, B, C).parameter_count() == 6 + 8 + 9);
}

// 1 to 8 factors of random mixed shapes (1 to 3 per side, some transposed), every op and
// layout, against the dense Kronecker product.
BOOST_AUTO_TEST_CASE_TEMPLATE(kron_of_many_mixed_factors, T, ScalarTypes) {
  for (int n = 1; n <= 8; ++n) {
    BOOST_TEST_CONTEXT(n << " factors") {
      std::vector<AnyOperator<T>> factors;
      HostMatrix<T> dense = HostMatrix<T>::Ones(1, 1);
      for (int f = 0; f < n; ++f) {
        const HostMatrix<T> g = random_matrix<T>(random_index(1, 3), random_index(1, 3));
        if (f % 3 == 1) {
          factors.emplace_back(Dense<T>(HostMatrix<T>(g.transpose())).transpose());
        } else {
          factors.emplace_back(Dense<T>(g));
        }
        dense = kron_dense(dense, g);
      }
      check_against_dense(Kron<T>(factors), dense);
    }
  }
}

// Empty inner dimensions inside products (children applied without apply's checks), and
// extents whose sum overflows.
BOOST_AUTO_TEST_CASE_TEMPLATE(alpha_zero_reads_no_signal, T, ScalarTypes) {
  // As in BLAS: alpha = 0 gives beta * Y without reading X, so NaN in X stays out of Y.
  const HostMatrix<T> a = random_matrix<T>(4, 3);
  const auto A = Dense<T>(a) * Diagonal<T>(random_matrix<T>(3, 1).col(0));
  HostMatrix<T> x = random_matrix<T>(3, 2);
  x(1, 1) = T(std::numeric_limits<RealOf<T>>::quiet_NaN());
  const HostMatrix<T> y0 = random_matrix<T>(4, 2);
  const T beta = random_scalar<T>();
  HostMatrix<T> y = y0;
  A.apply(Op::NoTrans, view(x), view(y), T(0), beta);
  BOOST_TEST(y.allFinite());
  BOOST_TEST(relative_error(y, HostMatrix<T>(beta * y0)) <= tolerance<T>());
  A.apply(Op::NoTrans, view(x), view(y), T(0), T(0));
  BOOST_TEST(y.isZero(0));
}

BOOST_AUTO_TEST_CASE(empty_and_overflowing_extents) {
  const Dense<double> Z(HostMatrix<double>::Zero(2, 0)), D(random_matrix<double>(2, 2)),
      W(HostMatrix<double>::Zero(0, 3));
  const auto P = kron(Z, D) * W;  // (4x0)(0x3): the 4x3 zero operator
  const HostMatrix<double> x = random_matrix<double>(3, 5);
  HostMatrix<double> y = HostMatrix<double>::Ones(4, 5);
  P.apply(Op::NoTrans, view(x), view(y), 1.0, 0.5);
  BOOST_TEST(y.isApprox(HostMatrix<double>::Constant(4, 5, 0.5)));
  const HostMatrix<double> yt_x = random_matrix<double>(4, 5);
  HostMatrix<double> yt = HostMatrix<double>::Ones(3, 5);
  P.apply(Op::Trans, view(yt_x), view(yt));
  BOOST_TEST(yt.isZero());
  // A Kronecker product with an empty factor is no KS chain, and simplify leaves it.
  std::mt19937 gen(5);
  const AnyOperator<double> k =
      kron(Identity<double>(0), KSFactor<double>::random({1, 2, 2, 1}, gen));
  BOOST_TEST(simplify(k).rows() == 0);
  const Identity<double> huge(Index(1) << 62);
  BOOST_CHECK_THROW(block_diag(huge, huge), ShapeError);
  BOOST_CHECK_THROW(vstack(huge, huge), ShapeError);
  BOOST_CHECK_THROW(hstack(huge, huge), ShapeError);
}

BOOST_AUTO_TEST_CASE(kron_rejects_what_it_cannot_represent) {
  // Extents whose product overflows a 64-bit index.
  const Identity<double> huge(Index(1) << 40);
  BOOST_CHECK_THROW(kron(huge, huge), ShapeError);
  // A factor without columns: an empty operator (flops 0, applied as beta * Y).
  const Dense<double> empty(HostMatrix<double>::Zero(2, 0));
  const auto k = kron(Dense<double>(random_matrix<double>(3, 2)), empty);
  BOOST_TEST(k.rows() == 6);
  BOOST_TEST(k.cols() == 0);
  BOOST_TEST(k.flops(4) == 0.0);
  HostMatrix<double> x(0, 4), y = HostMatrix<double>::Ones(6, 4);
  k.apply(Op::NoTrans, view(x), view(y), 1.0, 0.5);
  BOOST_TEST(y.isApprox(HostMatrix<double>::Constant(6, 4, 0.5)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(block_diag_and_stacks, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(2, 3), b = random_matrix<T>(4, 2),
                      c = random_matrix<T>(2, 2);
  const Dense<T> A(a), B(b), C(c);
  HostMatrix<T> diag = HostMatrix<T>::Zero(8, 7);
  diag.block(0, 0, 2, 3) = a;
  diag.block(2, 3, 4, 2) = b;
  diag.block(6, 5, 2, 2) = c;
  check_against_dense(block_diag(A, B, C), diag);
  HostMatrix<T> v(6, 2);
  v << b, c;
  check_against_dense(vstack(B, C), v);
  HostMatrix<T> h(2, 7);
  h << a, c, c;
  check_against_dense(hstack(A, C, C), h);
  check_against_dense(hstack(A, C).transpose(),
                      HostMatrix<T>(HostMatrix<T>(h.leftCols(5)).transpose()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(any_operator_keeps_structure, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(3, 3), b = random_matrix<T>(3, 3);
  const Dense<T> A(a), B(b);
  const T s = random_scalar<T>();
  AnyOperator<T> any = s * kron(A * B, A) + kron(A, B).transpose() * kron(B, A);
  const HostMatrix<T> expected =
      s * kron_dense(HostMatrix<T>(a * b), a) + kron_dense(a, b).transpose() * kron_dense(b, a);
  BOOST_TEST(any.node_type() == std::string("sum"));
  BOOST_TEST(any.children().size() == 2u);
  const auto scaled = any.children()[0];
  BOOST_TEST(scaled.node_type() == std::string("scaled"));
  BOOST_TEST(scaled.children()[0].node_type() == std::string("kron"));
  const auto product = scaled.children()[0].children()[0];
  BOOST_TEST(product.node_type() == std::string("product"));
  BOOST_TEST(product.children()[0].template as<Dense<T>>() != nullptr);
  BOOST_TEST(product.children()[0].template as<Identity<T>>() == nullptr);
  BOOST_TEST(any.children()[1].children()[0].node_type() == std::string("kron"));
  check_against_dense(any, expected);
  check_against_dense(AnyOperator<T>(any.transpose()), HostMatrix<T>(expected.transpose()));
  BOOST_TEST(any.parameter_count() == 9 * 3 + 1 + 9 * 4);
}

BOOST_AUTO_TEST_CASE(compile_time_rewrites) {
  const Dense<double> A(random_matrix<double>(3, 4));
  static_assert(std::is_same_v<decltype(A.transpose().transpose()), Dense<double>>);
  static_assert(std::is_same_v<decltype(A.adjoint().transpose()), Dense<double>>);  // real
  const Dense<std::complex<double>> Z(random_matrix<std::complex<double>>(3, 4));
  static_assert(std::is_same_v<decltype(Z.adjoint().adjoint()), Dense<std::complex<double>>>);
  static_assert(!std::is_same_v<decltype(Z.adjoint().transpose()), Dense<std::complex<double>>>);
  // Scalars fold into one factor.
  const auto twice = 2.0 * (3.0 * A);
  static_assert(std::is_same_v<decltype(twice), const Scaled<Dense<double>>>);
  BOOST_TEST(twice.factor() == 6.0);
  // (A B)^T rewritten as B^T A^T at compile time keeps the same matrix.
  const Dense<double> B(random_matrix<double>(4, 2));
  check_against_dense((A * B).transpose(),
                      HostMatrix<double>((A.matrix() * B.matrix()).transpose()));
  // kron transposes factor-wise.
  static_assert(std::is_same_v<decltype(kron(A, B).transpose()), Kron<double>>);
}

BOOST_AUTO_TEST_CASE(costs_add_up) {
  const Dense<double> A(random_matrix<double>(8, 4)), B(random_matrix<double>(4, 8));
  BOOST_TEST((A * B).flops(3) == A.flops(3) + B.flops(3));
  BOOST_TEST((A * B).parameter_count() == 64);
  // Kron flops follow the sliced multiply: each factor applied to all slices.
  const Dense<double> C(random_matrix<double>(2, 2));
  BOOST_TEST(kron(C, C, C).flops(1) == 3 * 4 * C.flops(1));
  // A sum adds its parts' outputs: one real flop per value, two for complex values.
  BOOST_TEST((A + A).flops(3) == 2 * A.flops(3) + 8 * 3);
  const Dense<std::complex<double>> Z(random_matrix<std::complex<double>>(3, 4));
  BOOST_TEST(Z.flops(8) == 8.0 * 3 * 4 * 8);
  BOOST_TEST((Z + Z).flops(8) == 2 * Z.flops(8) + 2.0 * 3 * 8);
  BOOST_TEST((Z + Z).transpose().flops(8) == 2 * Z.flops(8) + 2.0 * 4 * 8);
}

BOOST_AUTO_TEST_CASE(transposed_costs_follow_the_transposed_steps) {
  // F1 (2x3) ⊗ F2 (4x5) is 8 x 15. A X: F2 on 15/5 = 3 slices, then F1 on 12/3 = 4 slices:
  // 2 (4*5*3 + 2*3*4) = 168 flops a signal. A^T X: F2^T on 8/4 = 2 slices, then F1^T on
  // 10/2 = 5: 2 (5*4*2 + 3*2*5) = 140. A transposed node used to report A's 168.
  const Dense<double> F1(random_matrix<double>(2, 3)), F2(random_matrix<double>(4, 5));
  const AnyOperator<double> k = kron(F1, F2);
  BOOST_TEST(k.flops(3) == 168.0 * 3);
  BOOST_TEST(k.transpose().flops(3) == 140.0 * 3);
  BOOST_TEST(k.adjoint().flops(3) == 140.0 * 3);
  BOOST_TEST(k.transpose().transpose().flops(3) == 168.0 * 3);
  BOOST_TEST(kron(F1, F2).transpose().flops(3) == 140.0 * 3);  // the factor-wise transpose
  // Through the expressions around it (a sum adds one pass over its output).
  BOOST_TEST((2.0 * k).transpose().flops(1) == 140.0);
  BOOST_TEST((k + k).transpose().flops(1) == 2 * 140.0 + 15);
  BOOST_TEST(
      AnyOperator<double>(k * Dense<double>(random_matrix<double>(15, 6))).transpose().flops(1) ==
      140.0 + 2 * 15 * 6);
  BOOST_TEST(block_diag(k, k).transpose().flops(1) == 2 * 140.0);
  // A stack adds its parts where they share an output: A^T of a vstack, and an hstack.
  BOOST_TEST(vstack(k, k).transpose().flops(1) == 2 * 140.0 + 15);
  BOOST_TEST(vstack(k, k).flops(1) == 2 * 168.0);
  BOOST_TEST(hstack(k, k, k).flops(1) == 3 * 168.0 + 2 * 8);
  BOOST_TEST(hstack(k, k).transpose().flops(1) == 2 * 140.0);
  const Dense<std::complex<double>> C(random_matrix<std::complex<double>>(4, 5));
  BOOST_TEST(hstack(C, C).flops(2) == 2 * C.flops(2) + 2 * 4 * 2);  // two real flops an add
}

BOOST_AUTO_TEST_SUITE_END()

// The host applies a Kronecker product factor by factor in the order of least flops
// (detail::kron_cheapest_order), which differs from the sliced multiply's (last factor
// first) where factors are rectangular.
BOOST_AUTO_TEST_SUITE(kron_factor_order)

// Strongly rectangular factors (shrinking, growing, square, 1 x n, n x 1), in several
// arrangements, so that every op takes an order of its own, against the dense product.
BOOST_AUTO_TEST_CASE_TEMPLATE(rectangular_factors_in_any_arrangement, T, ScalarTypes) {
  std::vector<std::pair<Index, Index>> shapes = {{2, 7}, {9, 3}, {1, 5}, {6, 6}, {5, 1}};
  for (int arrangement = 0; arrangement < 4; ++arrangement) {
    std::vector<AnyOperator<T>> factors;
    HostMatrix<T> dense = HostMatrix<T>::Ones(1, 1);
    std::string name;
    for (auto [r, c] : shapes) {
      const HostMatrix<T> g = random_matrix<T>(r, c);
      factors.emplace_back(Dense<T>(g));
      dense = kron_dense(dense, g);
      name += std::to_string(r) + "x" + std::to_string(c) + " ";
    }
    BOOST_TEST_CONTEXT(name) {
      check_against_dense(Kron<T>(factors), dense);
      check_against_dense(Kron<T>(factors), dense, -1, 1);  // one signal
    }
    if (arrangement == 1) std::reverse(shapes.begin(), shapes.end());
    std::rotate(shapes.begin(), shapes.begin() + 2, shapes.end());
  }
}

// Factors that are operators of any kind (a product, a transpose, an identity, skipped),
// ordered by their own flops.
BOOST_AUTO_TEST_CASE_TEMPLATE(operator_factors_in_the_cheapest_order, T, ScalarTypes) {
  const HostMatrix<T> a = random_matrix<T>(2, 7), b = random_matrix<T>(9, 4),
                      c = random_matrix<T>(4, 3), d = random_matrix<T>(5, 1);
  const HostMatrix<T> eye = HostMatrix<T>::Identity(3, 3);
  const Kron<T> k({AnyOperator<T>(Dense<T>(a)), AnyOperator<T>(Identity<T>(3)),
                   AnyOperator<T>(Dense<T>(b) * Dense<T>(c)),
                   AnyOperator<T>(Dense<T>(HostMatrix<T>(d.transpose())).transpose())});
  const HostMatrix<T> dense = kron_dense(kron_dense(kron_dense(a, eye), HostMatrix<T>(b * c)), d);
  check_against_dense(k, dense);
  check_against_dense(kron(Identity<T>(4), Identity<T>(3)),
                      HostMatrix<T>(HostMatrix<T>::Identity(12, 12)));
}

// The chosen order against every order, in the same cost model, for random shapes: dense
// factors (2 in out flops a slice) and factors of any cost, free ones included.
BOOST_AUTO_TEST_CASE(cheapest_order_is_the_cheapest_of_all) {
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = std::size_t(random_index(1, 6));
    std::vector<detail::KronFactorCost> factors;
    for (std::size_t f = 0; f < n; ++f) {
      const Index in = random_index(1, 9), out = random_index(1, 9);
      const Index kind = random_index(0, 3);
      const double flops = kind == 0   ? 0.0
                           : kind == 1 ? double(random_index(1, 200))
                                       : 2.0 * double(in * out);
      factors.push_back({in, out, flops});
    }
    const std::vector<std::size_t> chosen = detail::kron_cheapest_order(factors);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    BOOST_TEST(std::is_permutation(chosen.begin(), chosen.end(), order.begin(), order.end()));
    double best = std::numeric_limits<double>::infinity();
    do {
      best = std::min(best, detail::kron_order_cost(factors, order));
    } while (std::next_permutation(order.begin(), order.end()));
    BOOST_TEST(detail::kron_order_cost(factors, chosen) <= best * (1 + 1e-12),
               "trial " << trial << ": " << detail::kron_order_cost(factors, chosen)
                        << " flops against " << best);
  }
}

BOOST_AUTO_TEST_CASE(shrinking_factors_go_first) {
  auto dense = [](Index in, Index out) {
    return detail::KronFactorCost{in, out, 2.0 * double(in * out)};
  };
  using Order = std::vector<std::size_t>;
  // 64x4 ⊗ 4x64 ⊗ 64x4 applied to signals (inputs 4, 64, 4): 4x64 first, 1024 values shrunk
  // to 64, rather than the last factor first, 1024 grown to 16384.
  const std::vector<detail::KronFactorCost> k = {dense(4, 64), dense(64, 4), dense(4, 64)};
  BOOST_TEST(detail::kron_cheapest_order(k) == (Order{1, 2, 0}));
  BOOST_TEST(detail::kron_order_cost(k, {1, 2, 0}) == 2.0 * (1024 * 4 + 64 * 64 + 1024 * 64));
  BOOST_TEST(detail::kron_order_cost(k, {2, 1, 0}) == 2.0 * 3 * 1024 * 64);
  // Its transpose (inputs 64, 4, 64) shrinks twice before growing.
  const std::vector<detail::KronFactorCost> kt = {dense(64, 4), dense(4, 64), dense(64, 4)};
  BOOST_TEST(detail::kron_cheapest_order(kt) == (Order{2, 0, 1}));
  // Not the ratio alone: 2 -> 1 (ratio 1/2) first, then 100 -> 10 (1/10): 2400 against 4040.
  const std::vector<detail::KronFactorCost> r = {dense(2, 1), dense(100, 10)};
  BOOST_TEST(detail::kron_cheapest_order(r) == (Order{0, 1}));
  BOOST_TEST(detail::kron_order_cost(r, {0, 1}) == 2400.0);
  BOOST_TEST(detail::kron_order_cost(r, {1, 0}) == 4040.0);
  // Square factors keep the sliced multiply's order, last factor first.
  BOOST_TEST(detail::kron_cheapest_order({dense(3, 3), dense(5, 5), dense(2, 2)}) ==
             (Order{2, 1, 0}));
}

BOOST_AUTO_TEST_SUITE_END()
