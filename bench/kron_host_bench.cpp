// bench/kron_host_bench: a Kronecker product of dense factors applied on the host (the
// factor-by-factor path of src/expr/kron.cpp, Eigen GEMMs and OpenMP permutations), on shapes
// where the order of the factors decides the cost (strongly rectangular factors) and on a
// square one where it does not.
//
//   kron_host_bench [--reps R] [--batch B]
//
// Every row: shape, op, scalar type, batch, the median wall time of R applications after 2
// warm-ups, and the flops of the fixed sliced-multiply order (Kron::flops) in GFLOP/s at
// that time (a rate on a fixed count, so comparable across builds).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "strop/strop.hpp"

using namespace strop;

namespace {

struct Shape {
  const char* name;
  std::vector<std::pair<Index, Index>> factors;  // rows x cols of each factor
};

template <class T>
void run(const Shape& shape, Op op, Index batch, int reps) {
  std::vector<AnyOperator<T>> factors;
  for (auto [r, c] : shape.factors)
    factors.emplace_back(Dense<T>(HostMatrix<T>::Random(r, c)));
  const Kron<T> k(factors);
  const bool t = op != Op::NoTrans;
  const HostMatrix<T> x = HostMatrix<T>::Random(t ? k.rows() : k.cols(), batch);
  HostMatrix<T> y(t ? k.cols() : k.rows(), batch);
  std::vector<double> seconds;
  for (int i = 0; i < reps + 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    k.apply(op, view(x), view(y));
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    if (i >= 2) seconds.push_back(d.count());
  }
  const double median = bench::median_of(seconds);
  const double flops = t ? k.transposed_flops(batch) : k.flops(batch);
  std::printf("%-26s %-7s %-6s B=%-5lld median %9.3f ms  %7.2f GFLOP/s (fixed-order count)\n",
              shape.name, to_string(op), sizeof(T) == 4 ? "float" : "double",
              static_cast<long long>(batch), median * 1e3, flops / median * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  Index batch = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::stoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--batch") == 0) batch = std::stoll(argv[i + 1]);
  }
  const std::vector<Shape> shapes = {
      {"64x4 (x) 4x64 (x) 64x4", {{64, 4}, {4, 64}, {64, 4}}},
      {"4x64 (x) 64x4 (x) 4x64", {{4, 64}, {64, 4}, {4, 64}}},
      {"32x32 (x) 32x32 (x) 32x32", {{32, 32}, {32, 32}, {32, 32}}},
  };
  for (const Shape& s : shapes)
    for (Op op : {Op::NoTrans, Op::Trans}) {
      run<float>(s, op, batch, reps);
      run<double>(s, op, batch, reps);
    }
  return 0;
}
