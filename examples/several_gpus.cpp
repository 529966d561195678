// One operator applied to a large batch spread over every visible GPU: one host thread and one
// Context per device, each applying the shared operator to its own share of the signals.
// Operators are immutable and keep one device copy of their parameters per device, so
// threads share them freely; a context belongs to one thread at a time. A call leaves the
// calling thread's current device as it found it. Without a GPU the batch is applied on the
// CPU only, and the program checks that path instead.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "strop/strop.hpp"

using namespace strop;

int main() {
  const Index n = 4096, signals = 2048;
  const KSChain<float> H = hadamard<float>(n, {Normalization::Orthonormal});
  const HostMatrix<float> x = HostMatrix<float>::Random(n, signals);

  const int devices = device_count();
  HostMatrix<float> y = HostMatrix<float>::Zero(n, signals);
  if (devices == 0) {
    std::printf("no CUDA device visible: the batch stays on the CPU\n");
    y = H * x;
  } else {
    // Device d takes columns [first(d), first(d + 1)).
    const auto first = [&](int d) { return signals * d / devices; };
    std::vector<std::thread> workers;
    std::vector<std::exception_ptr> failures(
        static_cast<std::size_t>(devices));  // rethrown after the join
    for (int d = 0; d < devices; ++d) {
      workers.emplace_back([&, d] {
        try {
          Context ctx(d);
          const Index begin = first(d), count = first(d + 1) - begin;
          const DeviceMatrix<float> xd =
              to_device(HostMatrix<float>(x.middleCols(begin, count)), Layout::ColMajor, ctx);
          DeviceMatrix<float> yd(n, count, Layout::ColMajor, ctx);
          H.apply(Op::NoTrans, xd.view(), yd.view(), 1.0f, 0.0f, ctx);
          y.middleCols(begin, count) = yd.to_host(ctx);  // disjoint columns per thread
        } catch (...) {
          failures[std::size_t(d)] = std::current_exception();
        }
      });
    }
    for (auto& worker : workers)
      worker.join();
    for (const auto& failure : failures)
      if (failure) std::rethrow_exception(failure);
    std::printf("%d signals of length %lld on %d GPU%s (%s)\n", int(signals),
                static_cast<long long>(n), devices, devices == 1 ? "" : "s", device_name(0));
  }
  // The naive O(n^2) transform of 16 signals spread over the batch (and so over the devices):
  // H[i][j] = (-1)^popcount(i & j) / sqrt(n).
  double error = 0;
  for (Index s = 0; s < signals; s += signals / 16) {
    Eigen::VectorXd naive = Eigen::VectorXd::Zero(n);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j)
        naive(i) += (std::popcount(std::uint64_t(i & j)) % 2 ? -1.0 : 1.0) * double(x(j, s));
    naive /= std::sqrt(double(n));
    error = std::max(error, (y.col(s).cast<double>() - naive).norm() / naive.norm());
  }
  std::printf("Walsh-Hadamard transform, largest relative error against the naive one: %.1e\n",
              error);
  return error < 1e-5 ? 0 : 1;
}
