// `strop demo`: builds a few structured operators of size n, applies them to a batch of
// signals, and prints for each its parameters, its error against the dense matrix it
// represents, and its speed against a dense GEMM on the same data.
#include <bit>
#include <cstdio>
#include <iostream>
#include <random>

#include "cli/commands.hpp"
#include "cli/timing.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

using T = float;
using Matrix = HostMatrix<T>;

// The Sylvester-Hadamard matrix from its closed form H[i][j] = (-1)^popcount(i & j).
Matrix hadamard_dense(Index n) {
  Matrix h(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j)
      h(i, j) = std::popcount(std::uint64_t(i & j)) % 2 ? -1.f : 1.f;
  return h;
}

// The same matrix as a square-dyadic butterfly: every 2x2 block is [[1, 1], [1, -1]].
KSChain<T> hadamard_butterfly(Index n) {
  std::vector<KSFactor<T>> factors;
  for (const KSPattern& p : butterfly_patterns(n)) {
    std::vector<T> values(p.nnz());
    for (Index i = 0; i < p.a; ++i)
      for (Index k = 0; k < 2; ++k)
        for (Index l = 0; l < 2; ++l)
          for (Index j = 0; j < p.d; ++j)
            values[((i * 2 + k) * 2 + l) * p.d + j] = (k == 1 && l == 1) ? -1.f : 1.f;
    factors.emplace_back(p, std::move(values));
  }
  return KSChain<T>(std::move(factors));
}

struct Row {
  std::string name;
  AnyOperator<T> op;
  Matrix dense;  // the matrix the operator must equal
};

void print_row(const Row& row, const Matrix& x, Index n) {
  Matrix y(row.op.rows(), x.cols());
  const double t_struct = median_seconds([&] { apply(row.op, view(x), view(y)); });
  Matrix y_ref(row.dense.rows(), x.cols());
  const double t_dense = median_seconds([&] { y_ref.noalias() = row.dense * x; });
  const double error = double((y - y_ref).norm() / y_ref.norm());
  std::printf("%-28s %10lld %9.1fx %11.2e %10.3f %10.3f %8.2fx\n", row.name.c_str(),
              static_cast<long long>(row.op.parameter_count()),
              double(n) * double(n) / double(std::max<Index>(row.op.parameter_count(), 1)), error,
              t_struct * 1e3, t_dense * 1e3, t_dense / t_struct);
}

void gpu_section(const std::vector<Row>& rows, const Matrix& x) {
  std::printf("\nGPU: %s\n", device_name(0));
  std::printf("%-28s %11s %10s %10s\n", "operator (on the GPU)", "error", "ms", "GFLOP/s");
  const Row& dense_row = rows.front();
  const Dense<T> dense(dense_row.dense);
  const DeviceMatrix<T> xd = to_device(x, Layout::RowMajor);
  DeviceMatrix<T> yd(dense.rows(), x.cols(), Layout::RowMajor);
  auto& ctx = default_context();
  const double t = median_seconds([&] {
    apply(dense, xd.view(), yd.view());
    ctx.synchronize();
  });
  const Matrix y_ref = dense_row.dense * x;
  const double error = double((yd.to_host() - y_ref).norm() / y_ref.norm());
  std::printf("%-28s %11.2e %10.3f %10.1f\n", "dense (cuBLAS)", error, t * 1e3,
              dense.flops(x.cols()) / t * 1e-9);
}

}  // namespace

int run_demo(const DemoOptions& options) {
  const Index n = options.size;
  const Index batch = options.batch;
  require<ShapeError>(std::has_single_bit(std::uint64_t(n)), "demo: --size ", n,
                      " must be a power of two");
  std::mt19937 rng(2026);
  const int log_n = std::countr_zero(std::uint64_t(n));
  const Index root = Index(1) << (log_n / 2);  // n = root * (n / root)

  std::vector<Row> rows;
  auto add = [&](std::string name, AnyOperator<T> op, Matrix dense) {
    rows.push_back({std::move(name), std::move(op), std::move(dense)});
  };
  auto add_self = [&](std::string name, AnyOperator<T> op) {
    Matrix dense = op.to_dense();
    add(std::move(name), std::move(op), std::move(dense));
  };
  Matrix dense = Matrix::Random(n, n);
  add("dense", Dense<T>(dense), dense);
  add("hadamard (butterfly)", hadamard_butterfly(n), hadamard_dense(n));
  add_self("random butterfly", KSChain<T>::random(butterfly_patterns(n), rng));
  add_self("monarch chain (KS)", KSChain<T>::random(monarch_patterns(n, n, root), rng));
  add_self("monarch (BLR, rank 1)", Monarch<T>::random(n, n, root, n / root, 1, rng));
  add_self("blast (b=16, r=n/8)", Blast<T>::random(n, n, 16, 16, n / 8, rng));
  add_self("low rank (r=n/16)", LowRank<T>(Matrix::Random(n, n / 16), Matrix::Random(n / 16, n)));
  const Matrix f1 = Matrix::Random(root, root), f2 = Matrix::Random(n / root, n / root);
  const Dense<T> F1(f1), F2(f2);
  add_self("kron (2 dense factors)", kron(F1, F2));
  add_self(
      "0.5 H B + L (expression)",
      AnyOperator<T>(0.5f * hadamard_butterfly(n) * KSChain<T>::random(butterfly_patterns(n), rng) +
                     LowRank<T>(Matrix::Random(n, 4), Matrix::Random(4, n))));

  const Matrix x = Matrix::Random(n, batch);
  std::printf("strop demo: n = %lld, batch = %lld signals, float32, CPU (%s)\n",
              static_cast<long long>(n), static_cast<long long>(batch),
              Eigen::nbThreads() > 1 ? "multi-threaded Eigen" : "one thread");
  std::printf("%-28s %10s %10s %11s %10s %10s %9s\n", "operator", "params", "compress",
              "rel. error", "ms", "dense ms", "speedup");
  for (const Row& row : rows)
    print_row(row, x, n);

  const bool want_gpu = options.device != "cpu";
  if (want_gpu && cuda_available()) {
    gpu_section(rows, x);
  } else if (options.device == "cuda") {
    throw DeviceError("demo: --device cuda requested but no CUDA device is visible");
  } else {
    std::printf("\nGPU: none visible (CPU only)\n");
  }
  return 0;
}

}  // namespace strop::cli
