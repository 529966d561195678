// GPU plumbing end to end: Dense through cuBLAS and expressions of it evaluated on the
// device, against the CPU reference. Every test is skipped when no CUDA device is visible.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "gpu_reference.hpp"
#include "src/runtime/cuda_check.hpp"

using namespace strop;
using namespace strop::testing;

BOOST_AUTO_TEST_SUITE(gpu_dense, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE(device_is_named) {
  BOOST_TEST_MESSAGE("device: " << device_name(0));
  BOOST_TEST(std::string(device_name(0)) != "none");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(host_device_round_trip, T, ScalarTypes) {
  const HostMatrix<T> m = random_matrix<T>(37, 5);
  for (Layout layout : {Layout::ColMajor, Layout::RowMajor}) {
    BOOST_TEST(relative_error(to_device(m, layout).to_host(), m) == 0.0);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dense_cublas_matches_cpu, T, ScalarTypes) {
  for (auto [m, n, b] :
       {std::tuple<Index, Index, Index>{1, 1, 1}, {33, 17, 5}, {64, 128, 300}, {7, 300, 1}}) {
    check_gpu_against_cpu(Dense<T>(random_matrix<T>(m, n)), b);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(expressions_on_the_device, T, ScalarTypes) {
  const Dense<T> A(random_matrix<T>(24, 16)), B(random_matrix<T>(16, 24)),
      C(random_matrix<T>(24, 24));
  const T s = random_scalar<T>();
  check_gpu_against_cpu(s * (A * B) + C.transpose() - Identity<T>(24), 9);
  // (C^T)^H = conj(C): runs the device conjugation kernel.
  check_gpu_against_cpu(C.transpose().adjoint() * A, 4);
  check_gpu_against_cpu(AnyOperator<T>(A * B - C), 3);
  check_gpu_against_cpu(block_diag(A, B), 5);
  check_gpu_against_cpu(vstack(A, C * A), 5);
}

BOOST_AUTO_TEST_CASE(operator_star_on_device_matrices) {
  const Dense<float> A(random_matrix<float>(32, 8));
  const HostMatrix<float> x = random_matrix<float>(8, 6);
  const DeviceMatrix<float> yd = A * to_device(x, Layout::RowMajor);
  BOOST_TEST((yd.layout() == Layout::RowMajor));
  BOOST_TEST(relative_error(yd.to_host(), HostMatrix<float>(A.matrix() * x)) <=
             tolerance<float>(8));
}

BOOST_AUTO_TEST_CASE(out_of_memory_is_a_device_error) {
  // 2^40 doubles = 8 TiB: more than any GPU has.
  BOOST_CHECK_THROW(DeviceMatrix<double>(Index(1) << 20, Index(1) << 20), DeviceError);
  // The context still works afterwards.
  BOOST_TEST(to_device(HostMatrix<double>(HostMatrix<double>::Ones(2, 2))).to_host().sum() == 4);
}

// A kernel sized for more shared memory than the device gives a block (an sm_90 tile on an
// A100) is refused with the sizes, before CUDA would answer "invalid argument". (The check
// comes before the kernel is looked at: any address serves.)
BOOST_AUTO_TEST_CASE(shared_memory_beyond_the_device_is_a_device_error) {
  int device = 0, most = 0;
  BOOST_TEST_REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  BOOST_TEST_REQUIRE(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            device) == cudaSuccess);
  static const int not_a_kernel = 0;
  const std::size_t bytes = std::size_t(most) + 16;
  try {
    detail::allow_dynamic_shared_memory(&not_a_kernel, bytes, "test kernel");
    BOOST_ERROR("no DeviceError for " << bytes << " bytes of shared memory");
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find(std::to_string(bytes) + " bytes of shared memory") !=
               std::string::npos);
    BOOST_TEST(message.find("allows " + std::to_string(most)) != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(persistent_workspaces_are_zeroed_and_kept_per_key) {
  Context ctx(0);
  auto read = [&](const void* p, std::size_t n) {
    std::vector<unsigned char> bytes(n, 0xff);
    detail::copy_bytes(bytes.data(), MemorySpace::Host, p, MemorySpace::Device, n, ctx);
    return bytes;
  };
  void* a = ctx.persistent_workspace("a", 1000);
  BOOST_TEST_REQUIRE(a != nullptr);
  BOOST_TEST(read(a, 1000) == std::vector<unsigned char>(1000, 0));  // zeroed when made
  const std::vector<unsigned char> ones(1000, 1);
  detail::copy_bytes(a, MemorySpace::Device, ones.data(), MemorySpace::Host, 1000, ctx);
  // The same key: the same block, contents kept; a larger request is an error.
  BOOST_TEST(ctx.persistent_workspace("a", 800) == a);
  BOOST_TEST(read(a, 1000) == ones);
  BOOST_CHECK_THROW(ctx.persistent_workspace("a", 1001), DeviceError);
  void* b = ctx.persistent_workspace("b", 64);
  BOOST_TEST(b != a);
  BOOST_TEST(read(b, 64) == std::vector<unsigned char>(64, 0));
  // While the stream captures a graph, a new key gives null (its memset could not be
  // captured), a known one its block.
  void* during_capture = a;
  void* known = nullptr;
  median_graph_seconds_each(ctx, {[&] {
                              during_capture = ctx.persistent_workspace("c", 64);
                              known = ctx.persistent_workspace("b", 64);
                            }},
                            1, 1, 0);
  BOOST_TEST(during_capture == nullptr);
  BOOST_TEST(known == b);
  BOOST_TEST(ctx.persistent_workspace("c", 64) != nullptr);
}

// Timing with the L2 evicted before each run: every work runs warm-up + repeats times, in
// order on the context's stream, and the eviction writes only its own buffer (the work's
// device data keep what the work wrote).
BOOST_AUTO_TEST_CASE(cold_timing_runs_each_work_and_evicts_only_its_own_buffer) {
  Context ctx(0);
  const std::size_t n = std::size_t(1) << 20;
  Buffer<unsigned char> data(Index(n), MemorySpace::Device, ctx);
  int runs[2] = {0, 0};
  auto fill_with = [&](int w, unsigned char value) {
    return [&, w, value] {
      ++runs[w];
      detail::check_cuda(cudaMemsetAsync(data.data() + w * (n / 2), value, n / 2,
                                         static_cast<cudaStream_t>(ctx.stream())),
                         "cudaMemsetAsync");
    };
  };
  const std::vector<double> seconds =
      median_cold_device_seconds_each(ctx, {fill_with(0, 7), fill_with(1, 9)}, 5, 2);
  BOOST_TEST_REQUIRE(seconds.size() == 2u);
  for (double t : seconds)
    BOOST_TEST((std::isfinite(t) && t > 0));
  BOOST_TEST(runs[0] == 7);
  BOOST_TEST(runs[1] == 7);
  std::vector<unsigned char> host(n, 0);
  detail::copy_bytes(host.data(), MemorySpace::Host, data.data(), MemorySpace::Device, n, ctx);
  BOOST_TEST(std::count(host.begin(), host.begin() + n / 2, 7) == std::ptrdiff_t(n / 2));
  BOOST_TEST(std::count(host.begin() + n / 2, host.end(), 9) == std::ptrdiff_t(n / 2));
}

// The diagonal's row-scaling kernel (d conjugated for A^H), every layout pair and alpha/beta,
// and inside an expression and a Kronecker product (the any-factor path).
BOOST_AUTO_TEST_CASE_TEMPLATE(diagonal_on_the_device, T, ScalarTypes) {
  const Diagonal<T> D(typename Diagonal<T>::Vector(random_matrix<T>(24, 1)));
  check_gpu_against_cpu(D, 9);
  const Dense<T> A(random_matrix<T>(24, 24));
  check_gpu_against_cpu(A * D + D.adjoint(), 5);
  check_gpu_against_cpu(kron(Diagonal<T>(typename Diagonal<T>::Vector(random_matrix<T>(3, 1))), A),
                        4);
}

BOOST_AUTO_TEST_CASE(an_operator_outlives_the_context_it_was_first_applied_with) {
  // The operator's device copy (its DeviceCache) freed itself through the context of its
  // upload: a use after free when that context (one per thread or stream) went first.
  const HostMatrix<float> a = random_matrix<float>(16, 12), x = random_matrix<float>(12, 3);
  auto A = std::make_unique<Dense<float>>(a);
  std::optional<Context> ctx(std::in_place, 0);
  {
    const DeviceMatrix<float> xd = to_device(x, Layout::ColMajor, *ctx);
    DeviceMatrix<float> yd(16, 3, Layout::ColMajor, *ctx);
    A->apply(Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, *ctx);  // uploads A
    BOOST_TEST(relative_error(yd.to_host(), HostMatrix<float>(a * x)) <= tolerance<float>(12));
  }
  ctx.reset();
  A.reset();  // frees the copy without the destroyed context
  // A second operator on another context, and the device, still work.
  Context other(0);
  const DeviceMatrix<float> xd = to_device(x, Layout::ColMajor, other);
  DeviceMatrix<float> yd(16, 3, Layout::ColMajor, other);
  Dense<float>(a).apply(Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, other);
  BOOST_TEST(relative_error(yd.to_host(), HostMatrix<float>(a * x)) <= tolerance<float>(12));
}

BOOST_AUTO_TEST_CASE(moved_from_device_matrices_are_empty) {
  // A moved-from matrix kept its shape over a null pointer, so a view of it looked valid.
  DeviceMatrix<float> a = to_device(HostMatrix<float>(random_matrix<float>(5, 3)));
  DeviceMatrix<float> b = std::move(a);
  BOOST_TEST(a.rows() == 0);  // NOLINT(bugprone-use-after-move): the state under test
  BOOST_TEST(a.cols() == 0);
  BOOST_TEST(b.rows() == 5);
  BOOST_TEST(b.to_host().allFinite());
}

BOOST_AUTO_TEST_CASE(dense_refuses_a_leading_dimension_below_the_rows) {
  // cuBLAS was given max(ld, rows): columns that overlap in the view (a repeated signal, a
  // too small stride) were read as other, packed memory.
  const Dense<float> A(random_matrix<float>(4, 3));
  DeviceMatrix<float> x = to_device(HostMatrix<float>(random_matrix<float>(3, 4)));
  DeviceMatrix<float> y(4, 2);
  const MatrixView<const float> repeated{x.data(), 3, 2, 1, 0, MemorySpace::Device};
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, repeated, y.view()), DeviceError);
  const MatrixView<const float> overlapping{x.data(), 3, 2, 1, 2, MemorySpace::Device};
  BOOST_CHECK_THROW(A.apply(Op::NoTrans, overlapping, y.view()), DeviceError);
  // A padded leading dimension is fine.
  const MatrixView<const float> padded{x.data(), 2, 2, 1, 6, MemorySpace::Device};
  const Dense<float> B(random_matrix<float>(4, 2));
  B.apply(Op::NoTrans, padded, y.view());
  const HostMatrix<float> xh = x.to_host();
  HostMatrix<float> x_padded(2, 2);
  x_padded << xh(0, 0), xh(0, 2), xh(1, 0), xh(1, 2);
  BOOST_TEST(relative_error(y.to_host(), HostMatrix<float>(B.matrix() * x_padded)) <=
             tolerance<float>(2));
}

BOOST_AUTO_TEST_CASE(copies_follow_the_context_that_made_the_matrix) {
  // to_host(), upload() and A * X ran on default_context()'s stream whatever context made
  // the matrix: unordered with the work queued on the matrix's own stream.
  Context other(0);
  const Dense<float> A(random_matrix<float>(64, 48));
  const HostMatrix<float> x = random_matrix<float>(48, 40);
  DeviceMatrix<float> xd(48, 40, Layout::RowMajor, other);
  BOOST_TEST(&xd.context() == &other);
  xd.upload(x);
  const DeviceMatrix<float> yd = A * xd;
  BOOST_TEST(&yd.context() == &other);
  BOOST_TEST(relative_error(yd.to_host(), HostMatrix<float>(A.matrix() * x)) <=
             tolerance<float>(48));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(alpha_zero_reads_no_signal_on_the_device, T, ScalarTypes) {
  const Dense<T> A(random_matrix<T>(6, 5));
  HostMatrix<T> x = random_matrix<T>(5, 3);
  x(2, 1) = T(std::numeric_limits<RealOf<T>>::quiet_NaN());
  const HostMatrix<T> y0 = random_matrix<T>(6, 3);
  const T beta = random_scalar<T>();
  const DeviceMatrix<T> xd = to_device(x);
  DeviceMatrix<T> yd = to_device(y0);
  A.apply(Op::NoTrans, xd.view(), yd.view(), T(0), beta);
  const HostMatrix<T> y = yd.to_host();
  BOOST_TEST(y.allFinite());
  BOOST_TEST(relative_error(y, HostMatrix<T>(beta * y0)) <= tolerance<T>());
}

BOOST_AUTO_TEST_SUITE_END()
