// Which memory a device application accepts, and which device a call leaves current.
// - A view marked as device memory must be memory the context's device can use: pageable host
//   memory or another device's memory is a DeviceError before any kernel runs (a kernel would
//   fault, and an illegal address leaves the device unusable for the rest of the process);
//   managed and mapped pinned memory work.
// - A call with a Context(1) gives the calling thread back the device it had, and a process
//   that works on device 1 alone does not start device 0 (a context there costs hundreds of MB).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "gpu_reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {

// The case that a parent test runs alone in a child process (see below).
struct InChildProcess {
  boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
    boost::test_tools::assertion_result result(std::getenv("STROP_DEVICE1_ALONE") != nullptr);
    result.message() << "run by work_on_device_1_alone_does_not_start_device_0";
    return result;
  }
};

int current_device() {
  int device = -1;
  BOOST_REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  return device;
}

// Memory from cudaMallocManaged or cudaMallocHost, freed at scope exit.
template <class T>
struct CudaMemory {
  T* data = nullptr;
  bool pinned = false;
  CudaMemory(Index count, bool pinned_host) : pinned(pinned_host) {
    const std::size_t bytes = sizeof(T) * std::size_t(count);
    void* p = nullptr;
    BOOST_REQUIRE((pinned ? cudaMallocHost(&p, bytes) : cudaMallocManaged(&p, bytes)) ==
                  cudaSuccess);
    data = static_cast<T*>(p);
  }
  ~CudaMemory() { pinned ? cudaFreeHost(data) : cudaFree(data); }
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;
};

// Y = A X through device views over `x` and `y` (column-major, filled from the host).
void apply_through(const Dense<float>& A, float* x, float* y, const HostMatrix<float>& xh,
                   Context& ctx) {
  std::copy(xh.data(), xh.data() + xh.size(), x);
  const ConstView<float> X =
      make_view(x, xh.rows(), xh.cols(), Layout::ColMajor, MemorySpace::Device);
  const MatrixView<float> Y =
      make_view(y, A.rows(), xh.cols(), Layout::ColMajor, MemorySpace::Device);
  A.apply(Op::NoTrans, X, Y, 1.0f, 0.0f, ctx);
  ctx.synchronize();
}

// Every kind of device work strop offers, on ctx: copies both ways, operator applications
// (a cuBLAS GEMM, a KS kernel chain, a 16-bit path), a factorization on the device and the
// frees of everything it made. Checks each result against its CPU reference.
void device_work(Context& ctx) {
  const HostMatrix<float> a = random_matrix<float>(96, 64);
  const HostMatrix<float> x = random_matrix<float>(64, 40);
  const Dense<float> dense(a);
  {
    const DeviceMatrix<float> xd = to_device(x, Layout::ColMajor, ctx);
    DeviceMatrix<float> yd(96, 40, Layout::RowMajor, ctx);
    dense.apply(Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, ctx);
    BOOST_TEST(relative_error(yd.to_host(ctx), HostMatrix<float>(a * x)) <= tolerance<float>(64));
  }
  std::mt19937 gen(7);
  const auto chain = KSChain<float>::random(butterfly_patterns(256), gen);
  const HostMatrix<float> xs = random_matrix<float>(256, 33);
  HostMatrix<float> expected(256, 33);
  chain.apply(Op::NoTrans, view(xs), view(expected));
  {
    const DeviceMatrix<float> xd = to_device(xs, Layout::ColMajor, ctx);
    DeviceMatrix<float> yd(256, 33, Layout::ColMajor, ctx);
    chain.apply(Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, ctx);
    BOOST_TEST(relative_error(yd.to_host(ctx), expected) <= tolerance<float>(256));
    const DeviceMatrix<half> xh =
        to_device(HostMatrix<half>(xs.cast<half>()), Layout::ColMajor, ctx);
    DeviceMatrix<half> yh(256, 33, Layout::ColMajor, ctx);
    apply_reduced_precision(chain, Op::NoTrans, xh.view(), yh.view(), 1.0f, 0.0f, ctx);
    BOOST_TEST(relative_error(HostMatrix<float>(yh.to_host(ctx).cast<float>()), expected) <= 1e-2);
  }
  LowRankOptions options;
  options.rank = 8;
  options.device = Device::cuda;
  const HostMatrix<float> w = random_matrix<float>(80, 8) * random_matrix<float>(8, 70);
  const auto f = factorize_lowrank(w, options, ctx);
  BOOST_TEST(relative_error(f.lowrank.to_dense(), w) <= 1e-4);
  ctx.synchronize();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_devices, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE(a_device_view_over_host_memory_is_an_error) {
  const Dense<float> A(random_matrix<float>(16, 8));
  HostMatrix<float> x = random_matrix<float>(8, 4);
  const HostMatrix<float> y0 = random_matrix<float>(16, 4);
  DeviceMatrix<float> yd = to_device(y0);
  const ConstView<float> X = make_view(x.data(), 8, 4, Layout::ColMajor, MemorySpace::Device);
  check_error_mentions<DeviceError>([&] { A.apply(Op::NoTrans, X, yd.view()); },
                                    "dense: X is marked as device memory");
  BOOST_TEST((yd.to_host() == y0));  // Y untouched
  // Y over host memory, X fine; and the 16-bit path makes the same check.
  const DeviceMatrix<float> xd = to_device(x);
  HostMatrix<float> y = y0;
  const MatrixView<float> Y = make_view(y.data(), 16, 4, Layout::ColMajor, MemorySpace::Device);
  check_error_mentions<DeviceError>([&] { A.apply(Op::NoTrans, xd.view(), Y); },
                                    "dense: Y is marked as device memory");
  BOOST_TEST((y == y0));
  std::mt19937 gen(3);
  const auto chain = KSChain<float>::random(butterfly_patterns(16), gen);
  HostMatrix<half> xh = HostMatrix<half>::Zero(16, 4);
  DeviceMatrix<half> yh(16, 4);
  check_error_mentions<DeviceError>(
      [&] {
        apply_reduced_precision(
            chain, Op::NoTrans,
            make_view<const half>(xh.data(), 16, 4, Layout::ColMajor, MemorySpace::Device),
            yh.view());
      },
      "X is marked as device memory");
  // The device still works: nothing faulted.
  DeviceMatrix<float> y2(16, 4);
  A.apply(Op::NoTrans, xd.view(), y2.view());
  BOOST_TEST(relative_error(y2.to_host(), HostMatrix<float>(A.to_dense() * x)) <=
             tolerance<float>(8));
}

BOOST_AUTO_TEST_CASE(managed_and_pinned_memory_work) {
  const HostMatrix<float> a = random_matrix<float>(48, 32);
  const HostMatrix<float> x = random_matrix<float>(32, 20);
  const HostMatrix<float> expected = a * x;
  const Dense<float> A(a);
  for (bool pinned : {false, true}) {
    BOOST_TEST_CONTEXT((pinned ? "pinned host memory" : "managed memory")) {
      CudaMemory<float> xm(32 * 20, pinned), ym(48 * 20, pinned);
      std::fill(ym.data, ym.data + 48 * 20, std::numeric_limits<float>::quiet_NaN());
      apply_through(A, xm.data, ym.data, x, default_context());
      const HostMatrix<float> got = Eigen::Map<const HostMatrix<float>>(ym.data, 48, 20);
      BOOST_TEST(relative_error(got, expected) <= tolerance<float>(32));
    }
  }
}

BOOST_AUTO_TEST_CASE(another_devices_memory_is_an_error, *utf::precondition(HasTwoDevices())) {
  Context ctx0(0), ctx1(1);
  const Dense<float> A(random_matrix<float>(16, 8));
  const HostMatrix<float> x = random_matrix<float>(8, 4);
  const HostMatrix<float> y0 = random_matrix<float>(16, 4);
  const DeviceMatrix<float> x_on_0 = to_device(x, Layout::ColMajor, ctx0);
  DeviceMatrix<float> y_on_1 = to_device(y0, Layout::ColMajor, ctx1);
  check_error_mentions<DeviceError>(
      [&] { A.apply(Op::NoTrans, x_on_0.view(), y_on_1.view(), 1.0f, 0.0f, ctx1); },
      "dense: X is in the memory of device 0, but the context runs on device 1");
  BOOST_TEST((y_on_1.to_host() == y0));
  const DeviceMatrix<float> x_on_1 = to_device(x, Layout::ColMajor, ctx1);
  A.apply(Op::NoTrans, x_on_1.view(), y_on_1.view(), 1.0f, 0.0f, ctx1);
  BOOST_TEST(relative_error(y_on_1.to_host(), HostMatrix<float>(A.to_dense() * x)) <=
             tolerance<float>(8));
}

BOOST_AUTO_TEST_CASE(work_on_a_second_device_leaves_the_current_device,
                     *utf::precondition(HasTwoDevices())) {
  for (int caller : {0, 1}) {
    BOOST_REQUIRE(cudaSetDevice(caller) == cudaSuccess);
    for (int device : {0, 1}) {
      BOOST_TEST_CONTEXT("thread on device " << caller << ", context on device " << device) {
        {
          Context ctx(device);
          device_work(ctx);
          BOOST_TEST(current_device() == caller);
        }
        BOOST_TEST(current_device() == caller);  // after the context's destruction too
      }
    }
  }
  BOOST_REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

// Run alone in a fresh process by the next case: nothing has started device 0 there.
BOOST_AUTO_TEST_CASE(device_1_alone, *utf::precondition(InChildProcess())) {
  BOOST_REQUIRE(device_count() >= 2);
  BOOST_REQUIRE(!detail::device_started(0));
  {
    Context ctx(1);
    device_work(ctx);
  }
  BOOST_TEST(detail::device_started(1));
  BOOST_TEST(!detail::device_started(0));
}

BOOST_AUTO_TEST_CASE(work_on_device_1_alone_does_not_start_device_0,
                     *utf::precondition(HasTwoDevices())) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "STROP_DEVICE1_ALONE=1 '" + self +
                              "' --run_test=gpu_devices/device_1_alone > device_1_alone.log 2>&1";
  const int status = std::system(command.c_str());
  BOOST_TEST(status == 0, "see device_1_alone.log in the working directory");
}

BOOST_AUTO_TEST_SUITE_END()
