// Probe (session 41): Dense<T>::apply on the host with column- and row-major X and Y, the
// GFLOP/s of each (medians of 9). Built by hand against build/libstrop.a; see
// bench/results/host-gemm-maps-session41-cpu.txt.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "strop/strop.hpp"
using namespace strop;
template <class T, class XM, class YM>
void run(const char* name, Index n, Index b) {
  Dense<T> d(HostMatrix<T>::Random(n, n));
  XM x = XM::Random(n, b);
  YM y(n, b);
  std::vector<double> s;
  for (int i = 0; i < 9; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    d.apply(Op::NoTrans, view(x), view(y));
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  std::printf("%-28s n=%lld B=%lld median %8.3f ms %6.1f GFLOP/s\n", name, (long long)n,
              (long long)b, s[4] * 1e3, 2.0 * n * n * b / s[4] * 1e-9);
}
int main() {
  using RM = Eigen::Matrix<float, -1, -1, Eigen::RowMajor>;
  using RMd = Eigen::Matrix<double, -1, -1, Eigen::RowMajor>;
  run<float, HostMatrix<float>, HostMatrix<float>>("float col-major X, Y", 1024, 1024);
  run<float, RM, RM>("float row-major X, Y", 1024, 1024);
  run<double, HostMatrix<double>, HostMatrix<double>>("double col-major X, Y", 1024, 1024);
  run<double, RMd, RMd>("double row-major X, Y", 1024, 1024);
  run<float, HostMatrix<float>, HostMatrix<float>>("float col-major X, Y", 64, 65536);
  run<float, RM, RM>("float row-major X, Y", 64, 65536);
}
