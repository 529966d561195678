// A Kronecker product on signals whose features are split over several parts, one per GPU
// (DistributedKron, FastKron's multi-GPU algorithm): each part holds a block of rows of every
// signal and never sees the rest. With one GPU the parts share it; without a GPU they are host
// matrices. The result is checked against the product applied to the whole signals on the CPU.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "strop/strop.hpp"

using namespace strop;

int main() {
  // 16 x 16 x 16 x 16 float factors: signals of 65536 values, 64 of them.
  std::vector<AnyOperator<float>> factors;
  for (int f = 0; f < 4; ++f)
    factors.emplace_back(Dense<float>(HostMatrix<float>::Random(16, 16)));
  const Kron<float> A(factors);
  const Index n = A.rows(), signals = 64;
  const HostMatrix<float> x = HostMatrix<float>::Random(n, signals);

  const int devices = device_count();
  const int parts = std::max(devices, 2);
  const DistributedKron<float> split(A, parts);
  const Index rows = n / parts;
  std::printf("%d parts of %lld rows on %s, %zu exchange steps\n", parts,
              static_cast<long long>(rows), devices == 0 ? "the CPU" : device_name(0),
              split.steps().size());

  HostMatrix<float> y(n, signals);
  if (devices == 0) {
    // Host parts: row blocks of x and y themselves.
    std::vector<ConstView<float>> xv;
    std::vector<MatrixView<float>> yv;
    for (int p = 0; p < parts; ++p) {
      xv.push_back(view(x).row_block(p * rows, rows));
      yv.push_back(view(y).row_block(p * rows, rows));
    }
    split.apply(Op::NoTrans, xv, yv, {});
  } else {
    // Part p on device p % devices, with its own context (stream).
    std::vector<std::unique_ptr<Context>> contexts;
    std::vector<Context*> pointers;
    std::vector<DeviceMatrix<float>> xd, yd;
    std::vector<ConstView<float>> xv;
    std::vector<MatrixView<float>> yv;
    for (int p = 0; p < parts; ++p) {
      contexts.push_back(std::make_unique<Context>(p % devices));
      pointers.push_back(contexts.back().get());
      xd.push_back(to_device(HostMatrix<float>(x.middleRows(p * rows, rows)), Layout::ColMajor,
                             *pointers[p]));
      yd.emplace_back(rows, signals, Layout::ColMajor, *pointers[p]);
    }
    for (int p = 0; p < parts; ++p) {
      xv.push_back(xd[p].view());
      yv.push_back(yd[p].view());
    }
    split.apply(Op::NoTrans, xv, yv, pointers);
    for (int p = 0; p < parts; ++p)
      y.middleRows(p * rows, rows) = yd[p].to_host(*pointers[p]);  // after part p's stream
  }

  HostMatrix<float> expected(n, signals);
  A.apply(Op::NoTrans, view(x), view(expected));
  const double error = double((y - expected).norm() / expected.norm());
  std::printf("relative error against the whole product on the CPU: %.1e\n", error);
  return error < 1e-5 ? 0 : 1;
}
