// Bad input gets the right typed error, with a message that names the values.
#include "reference.hpp"
#include "sanitizers.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(shape_mismatches) {
  const Dense<double> A(random_matrix<double>(3, 4)), B(random_matrix<double>(5, 2));
  BOOST_CHECK_THROW(A * B, ShapeError);
  BOOST_CHECK_THROW(A + B, ShapeError);
  BOOST_CHECK_THROW(vstack(A, B), ShapeError);
  BOOST_CHECK_THROW(hstack(A, B), ShapeError);
  HostMatrix<double> x = random_matrix<double>(5, 2), y(3, 2);
  BOOST_CHECK_THROW(apply(A, view(x), view(y)), ShapeError);
  HostMatrix<double> x4 = random_matrix<double>(4, 2), y_wrong(3, 3);
  BOOST_CHECK_THROW(apply(A, view(x4), view(y_wrong)), ShapeError);
  try {
    apply(A, view(x), view(y));
  } catch (const ShapeError& e) {
    BOOST_TEST(std::string(e.what()).find("needs X with 4 rows, got 5x2") != std::string::npos);
  }
  // Through an AnyOperator the message names the node it holds, not "any".
  try {
    apply(AnyOperator<double>(A * Dense<double>(random_matrix<double>(4, 4))), view(x), view(y));
    BOOST_FAIL("a shape mismatch through an AnyOperator was accepted");
  } catch (const ShapeError& e) {
    BOOST_TEST(std::string(e.what()).rfind("product (3x4)", 0) == 0, e.what());
  }
}

BOOST_AUTO_TEST_CASE(aliasing_output) {
  const Dense<double> A(random_matrix<double>(4, 4));
  HostMatrix<double> x = random_matrix<double>(4, 2);
  BOOST_CHECK_THROW(apply(A, view(x), view(x)), ShapeError);
}

BOOST_AUTO_TEST_CASE(non_finite_values) {
  HostMatrix<double> a = random_matrix<double>(2, 2);
  a(1, 0) = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(Dense<double>{a}, NumericalError);
  const Dense<double> A(random_matrix<double>(2, 2));
  BOOST_CHECK_THROW(std::numeric_limits<double>::infinity() * A, NumericalError);
  HostMatrix<double> x = random_matrix<double>(2, 1), y(2, 1);
  BOOST_CHECK_THROW(apply(A, view(x), view(y), std::numeric_limits<double>::quiet_NaN()),
                    NumericalError);
  // Finite alpha and factor whose product overflows: Inf only where the result overflows.
  // Inside a sum (whose first part writes Y before the scaled one runs), with X so small that
  // 1e10 * 1e300 * A X is finite, and with X = 1, where it is not.
  const Dense<double> B(random_matrix<double>(2, 2));
  const auto sum = B + 1e300 * A;
  for (const double scale : {1e-300, 1.0}) {
    const HostMatrix<double> small = scale * x;
    y.setConstant(7.0);
    apply(sum, view(small), view(y), 1e10, 1.0);
    const Eigen::ArrayXd expected =
        (1e10 * (B.matrix() * small + 1e300 * (A.matrix() * small))).array() + 7.0;
    BOOST_TEST_CONTEXT("X scaled by " << scale) {
      for (Index i = 0; i < 2; ++i) {
        if (std::isfinite(expected(i))) {
          BOOST_TEST(std::abs(y(i) - expected(i)) <= 1e-12 * std::abs(expected(i)));
        } else {
          BOOST_TEST(std::isinf(y(i)));
        }
      }
    }
  }
  Eigen::VectorXd d = Eigen::VectorXd::Ones(3);
  d(2) = std::numeric_limits<double>::infinity();
  BOOST_CHECK_THROW(Diagonal<double>{d}, NumericalError);
}

BOOST_AUTO_TEST_CASE(invalid_permutations) {
  BOOST_CHECK_THROW(Permutation<double>(std::vector<Index>{0, 0, 1}), PatternError);
  BOOST_CHECK_THROW(Permutation<double>(std::vector<Index>{0, 3, 1}), PatternError);
  BOOST_CHECK_THROW(Permutation<double>::bit_reversal(6), ShapeError);
}

BOOST_AUTO_TEST_CASE(device_without_gpu) {
  if (cuda_available()) return;  // covered by the GPU tests on a GPU machine
  BOOST_CHECK_THROW(DeviceMatrix<float>(4, 4), DeviceError);
  BOOST_CHECK_THROW(to_device(HostMatrix<float>(HostMatrix<float>::Ones(2, 2))), DeviceError);
  BOOST_TEST(std::string(device_name(0)) == "none");
  // Device timing without a device (it returned host timings in a CUDA build).
  int runs = 0;
  BOOST_CHECK_THROW(median_enqueue_seconds_each(default_context(), {[&] { ++runs; }}, 3, 1),
                    DeviceError);
  BOOST_CHECK_THROW(median_cold_device_seconds_each(default_context(), {[&] { ++runs; }}, 3, 1),
                    DeviceError);
  BOOST_TEST(runs == 0);
}

BOOST_AUTO_TEST_CASE(host_only_leaves_refuse_device_views) {
  // A view claiming device memory must never be read on the host. (With a device, a host
  // pointer dressed as a device view reaches the GPU path, which cannot tell.)
  if (cuda_available()) return;
  const Diagonal<float> D(Eigen::VectorXf::Ones(2));
  std::vector<float> storage(4);
  auto x = make_view<const float>(storage.data(), 2, 1, Layout::ColMajor, MemorySpace::Device);
  auto y = make_view(storage.data() + 2, 2, 1, Layout::ColMajor, MemorySpace::Device);
  BOOST_CHECK_THROW(D.apply(Op::NoTrans, x, y), DeviceError);
}

BOOST_AUTO_TEST_CASE(output_views_whose_elements_overlap) {
  // Y with a zero or too small stride writes two results to one address; a negative stride
  // walks off the buffer. Both used to be accepted and give order-dependent results.
  const Dense<double> A(random_matrix<double>(3, 3));
  HostMatrix<double> x = random_matrix<double>(3, 2);
  std::vector<double> storage(16, 0.0);
  MatrixView<double> repeated{storage.data(), 3, 2, 1, 0, MemorySpace::Host};
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, view(x), repeated), ShapeError);
  MatrixView<double> short_stride{storage.data(), 3, 2, 1, 2, MemorySpace::Host};
  try {
    A.apply(Op::NoTrans, view(x), short_stride);
    BOOST_FAIL("an output view with overlapping columns was accepted");
  } catch (const ShapeError& e) {
    BOOST_TEST(std::string(e.what()).find("share memory") != std::string::npos);
  }
  MatrixView<double> backwards{storage.data() + 8, 3, 2, 1, -3, MemorySpace::Host};
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, view(x), backwards), ShapeError);
  MatrixView<const double> x_backwards{x.data() + 3, 3, 2, 1, -3, MemorySpace::Host};
  HostMatrix<double> y(3, 2);
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, x_backwards, view(y)), ShapeError);
  // Distinct elements with a padded stride, and a read-only X that repeats one signal, are
  // fine: the result matches the dense product column by column.
  MatrixView<double> padded{storage.data(), 3, 2, 1, 5, MemorySpace::Host};
  MatrixView<const double> x_repeated{x.data(), 3, 2, 1, 0, MemorySpace::Host};
  A.apply(Op::NoTrans, x_repeated, padded);
  const Eigen::VectorXd expected = A.to_dense() * x.col(0);
  for (Index c = 0; c < 2; ++c)
    for (Index r = 0; r < 3; ++r)
      BOOST_TEST(padded(r, c) == expected(r), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(device_signals_need_distinct_elements) {
  // GPU kernels read X through a leading dimension and used max(ld, rows): a device X that
  // repeats a signal (stride 0) was read as other memory. Checked before the device is
  // touched, so this holds with and without a GPU.
  const Diagonal<float> D(Eigen::VectorXf::Ones(3));
  std::vector<float> storage(12);
  const MatrixView<const float> repeated{storage.data(), 3, 2, 1, 0, MemorySpace::Device};
  const auto y = make_view(storage.data() + 6, 3, 2, Layout::ColMajor, MemorySpace::Device);
  try {
    D.apply(Op::NoTrans, repeated, y);
    BOOST_FAIL("a device X with a repeated signal was accepted");
  } catch (const DeviceError& e) {
    BOOST_TEST(std::string(e.what()).find("distinct elements") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(device_matrix_shapes) {
  // Checked before any allocation, so these hold with and without a GPU.
  BOOST_CHECK_THROW(DeviceMatrix<float>(-2, -3), ShapeError);
  BOOST_CHECK_THROW(DeviceMatrix<float>(Index(1) << 40, Index(1) << 40), ShapeError);
  BOOST_CHECK_THROW(
      Buffer<double>(std::numeric_limits<Index>::max() / 2, MemorySpace::Host, default_context()),
      ShapeError);
}

// A ShapeError whose message holds `expected` (host memory that cannot be had is one: DESIGN.md
// section 6). The sizes below are absurd, so that nothing is allocated for real: beyond
// PTRDIFF_MAX bytes they are refused up front; beyond 2^57 bytes (more than x86-64 can map)
// the allocation itself fails, as std::bad_alloc, or as std::length_error past a std::vector's
// max_size(). Each used to escape as one of these.
template <class Call>
void check_host_memory_error(Call call, const std::string& expected) {
  check_error_mentions<ShapeError>(call, expected);
}

// 2^k x 1, without storing 2^k values: the Kronecker product of k columns (1, 1).
AnyOperator<double> tall_ones(int k) {
  return Kron<double>(std::vector<AnyOperator<double>>(
      std::size_t(k), Dense<double>(HostMatrix<double>::Ones(2, 1))));
}

BOOST_AUTO_TEST_CASE(bit_reversal_beyond_host_memory,
                     *boost::unit_test::precondition(FailedAllocationsThrow())) {
  check_host_memory_error([] { Permutation<double>::bit_reversal(Index(1) << 62); },
                          "permutation bit_reversal(4611686018427387904): 4611686018427387904 "
                          "indices (36893488147419103232 bytes) do not fit in host memory");
  // 2^58 bytes: allocated, and refused by the allocator.
  check_host_memory_error([] { Permutation<float>::bit_reversal(Index(1) << 55); },
                          "permutation bit_reversal(36028797018963968): 36028797018963968 "
                          "indices (288230376151711744 bytes) do not fit in host memory");
}

// A Buffer on its own (outside apply(), which translates its temporaries' failures): beyond a
// std::vector's max_size() it threw std::length_error, and a failed allocation std::bad_alloc.
BOOST_AUTO_TEST_CASE(host_buffer_beyond_host_memory,
                     *boost::unit_test::precondition(FailedAllocationsThrow())) {
  check_host_memory_error(
      [] { Buffer<double>((Index(1) << 60) + 1, MemorySpace::Host, default_context()); },
      "Buffer: 1152921504606846977 elements (9223372036854775816 bytes) do not fit");
  check_host_memory_error(
      [] { Buffer<double>(Index(1) << 55, MemorySpace::Host, default_context()); },
      "Buffer: 36028797018963968 elements (288230376151711744 bytes) do not fit");
}

BOOST_AUTO_TEST_CASE(to_dense_beyond_host_memory) {
  check_host_memory_error([] { Identity<double>(Index(1) << 31).to_dense(); },
                          "identity (2147483648x2147483648) to_dense(): its 2147483648x2147483648 "
                          "identity: 4611686018427387904 elements (36893488147419103232 bytes) do "
                          "not fit in host memory");
  // rows * cols overflows an index.
  check_host_memory_error([] { Identity<float>(Index(1) << 40).to_dense(); },
                          "1099511627776x1099511627776 elements overflow a 64-bit count");
  // 2^59 bytes: allocated, and refused by the allocator (Eigen's std::bad_alloc).
  check_host_memory_error([] { Identity<double>(Index(1) << 28).to_dense(); },
                          "72057594037927936 elements (576460752303423488 bytes) do not fit");
  // A 1-column result of 2^61 rows (its 1x1 identity is no problem).
  check_host_memory_error([] { tall_ones(61).to_dense(); },
                          "kron (2305843009213693952x1) to_dense(): its 2305843009213693952x1 "
                          "result: 2305843009213693952 elements (18446744073709551616 bytes)");
}

BOOST_AUTO_TEST_CASE(operator_times_matrix_beyond_host_memory) {
  const HostMatrix<double> x = HostMatrix<double>::Ones(1, 1);
  check_host_memory_error([&] { (void)(tall_ones(61) * x); },
                          "kron (2305843009213693952x1) * X: its 2305843009213693952x1 result: "
                          "2305843009213693952 elements (18446744073709551616 bytes)");
}

BOOST_AUTO_TEST_CASE(applying_beyond_host_memory,
                     *boost::unit_test::precondition(FailedAllocationsThrow())) {
  // (1 x 2^k) (2^k x 1): a 1x1 product whose intermediate has 2^k rows per signal. Its
  // temporary's std::vector throws std::bad_alloc for 2^56 doubles, std::length_error for 2^60.
  struct Case {
    int k;
    Index batch;
    const char* expected;
  };
  for (const Case c : {Case{55, 2,
                            "product (1x1) as A on a batch of 2: host memory could not "
                            "provide its temporaries"},
                       Case{60, 1,
                            "product (1x1) as A on a batch of 1: host memory could not "
                            "provide its temporaries"}}) {
    BOOST_TEST_CONTEXT("k = " << c.k) {
      const auto inner = tall_ones(c.k).transpose() * tall_ones(c.k);
      HostMatrix<double> x = HostMatrix<double>::Ones(1, c.batch), y(1, c.batch);
      check_host_memory_error([&] { apply(inner, view(x), view(y)); }, c.expected);
      check_host_memory_error([&] { inner.to_dense(); },
                              "product (1x1) as A on a batch of 1: host memory");
    }
  }
}

BOOST_AUTO_TEST_CASE(timing_needs_a_timed_run) {
  int runs = 0;
  BOOST_CHECK_THROW(median_host_seconds([&] { ++runs; }, 0, 1), ShapeError);
  BOOST_TEST(runs == 0);
  BOOST_TEST(median_host_seconds([&] { ++runs; }, 3, 1) >= 0.0);
  BOOST_TEST(runs == 4);
}

// Views made by hand: null data behind a nonempty view was dereferenced (a segfault), and a
// negative batch was read as empty by some operators and as a temporary's bad shape by others.
BOOST_AUTO_TEST_CASE(malformed_views_are_refused) {
  const HostMatrix<double> f = random_matrix<double>(4, 4);
  const AnyOperator<double> ops[] = {Dense<double>(f), Identity<double>(16),
                                     kron(Dense<double>(f), Dense<double>(f)),
                                     Dense<double>(f) * Dense<double>(f)};
  HostMatrix<double> y(16, 2);
  y.setConstant(7.0);
  for (const auto& A : ops) {
    BOOST_TEST_CONTEXT(A.node_type()) {
      const Index n = A.rows();
      HostMatrix<double> x = HostMatrix<double>::Ones(n, 2);
      const MatrixView<double> out = make_view(y.data(), n, 2, Layout::ColMajor);
      check_error_mentions<ShapeError>(
          [&] {
            A.apply(Op::NoTrans, ConstView<double>{nullptr, n, 2, 1, n}, out);
          },
          "X is a " + std::to_string(n) + "x2 view of null data");
      check_error_mentions<ShapeError>(
          [&] {
            A.apply(Op::NoTrans, view(x), MatrixView<double>{nullptr, n, 2, 1, n});
          },
          "Y is a " + std::to_string(n) + "x2 view of null data");
      check_error_mentions<ShapeError>(
          [&] {
            A.apply(Op::NoTrans, ConstView<double>{x.data(), n, -2, 1, n},
                    MatrixView<double>{y.data(), n, -2, 1, n});
          },
          "X has a negative shape " + std::to_string(n) + "x-2");
      BOOST_TEST((y.array() == 7.0).all());  // nothing was written
      // An empty batch may have null data.
      A.apply(Op::NoTrans, ConstView<double>{nullptr, n, 0, 1, n},
              MatrixView<double>{nullptr, n, 0, 1, n});
    }
  }
  const HostMatrix<double> g = HostMatrix<double>::Identity(4, 4) + 0.1 * f;
  const KronSolver<double> solver(kron(Dense<double>(g), Dense<double>(g)));
  HostMatrix<double> b = HostMatrix<double>::Ones(16, 2);
  check_error_mentions<ShapeError>(
      [&] {
        solver.solve(view(b), MatrixView<double>{nullptr, 16, 2, 1, 16});
      },
      "KronSolver: Y is a 16x2 view of null data");
}

BOOST_AUTO_TEST_SUITE_END()
