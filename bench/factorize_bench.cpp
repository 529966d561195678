// Factorization benchmark: time and relative error versus size for the square-dyadic
// butterfly, Monarch (b = 4, 16, 64), low rank and BLAST, on the CPU and (when present) the
// GPU; then error versus parameter count on structured matrices (RBF kernel on a 2-D grid,
// 2-D Laplacian, DCT, Gaussian). Prints CSV:
//   structure,N,device,seconds,rel_error,params
// and writes a JSON summary of the targets.
//   factorize_bench [--quick] [--json PATH] [--no-gpu]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <numbers>
#include <random>
#include <string>

#include "strop/factorize/factorize.hpp"
#include "strop/strop.hpp"

using namespace strop;

namespace {

template <class T>
HostMatrix<T> gaussian(Index rows, Index cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  HostMatrix<T> m(rows, cols);
  for (Index i = 0; i < m.size(); ++i)
    m.data()[i] = T(normal(rng));
  return m;
}

// A butterfly-structured target (so the error column means something) plus small noise.
template <class T>
HostMatrix<T> butterfly_target(Index n) {
  std::mt19937 rng(7);
  HostMatrix<T> w = KSChain<T>::random(butterfly_patterns(n), rng).to_dense();
  return w + gaussian<T>(n, n, 9) * T(1e-3 * double(w.norm()) / double(n));
}

HostMatrix<double> rbf_grid(Index n) {  // n = s^2 points on an s x s grid of [0,1]^2
  const Index s = Index(std::lround(std::sqrt(double(n))));
  HostMatrix<double> k(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      const double dx = double(i % s - j % s) / double(s), dy = double(i / s - j / s) / double(s);
      k(i, j) = std::exp(-(dx * dx + dy * dy) / 0.02);
    }
  return k;
}

HostMatrix<double> laplacian_2d(Index n) {
  const Index s = Index(std::lround(std::sqrt(double(n))));
  HostMatrix<double> l = HostMatrix<double>::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    l(i, i) = 4;
    if (i % s > 0) l(i, i - 1) = -1;
    if (i % s < s - 1) l(i, i + 1) = -1;
    if (i >= s) l(i, i - s) = -1;
    if (i + s < n) l(i, i + s) = -1;
  }
  return l;
}

HostMatrix<double> dct(Index n) {
  HostMatrix<double> c(n, n);
  for (Index k = 0; k < n; ++k)
    for (Index j = 0; j < n; ++j)
      c(k, j) = std::sqrt((k == 0 ? 1.0 : 2.0) / double(n)) *
                std::cos(std::numbers::pi * double(k) * (2.0 * double(j) + 1) / (2.0 * double(n)));
  return c;
}

void row(const std::string& structure, Index n, Device device, const FactorReport& r) {
  std::printf("%s,%lld,%s,%.6f,%.3e,%lld\n", structure.c_str(), static_cast<long long>(n),
              device == Device::cpu ? "cpu" : "cuda", r.seconds, r.relative_error,
              static_cast<long long>(r.parameters));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, gpu = cuda_available();
  std::string json = "bench/results/factorize-summary.json";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--no-gpu"))
      gpu = false;
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
  }
  std::vector<Device> devices{Device::cpu};
  if (gpu) devices.push_back(Device::cuda);
  std::map<std::string, double> summary;
  auto record = [&](const std::string& key, double value) { summary[key] = value; };

  std::printf("structure,N,device,seconds,rel_error,params\n");
  const std::vector<Index> sizes =
      quick ? std::vector<Index>{256, 512} : std::vector<Index>{512, 1024, 2048, 4096};
  for (Index n : sizes) {
    const HostMatrix<double> W = butterfly_target<double>(n);
    for (Device dev : devices) {
      // Error measurement excluded from the timings: it evaluates the operator densely.
      const bool measure = n <= 2048;
      const auto f =
          factorize_ks_chain(W, butterfly_patterns(n), {.compute_error = measure, .device = dev});
      row("butterfly_f64", n, dev, f.report);
      if (n == 4096)
        record(dev == Device::cpu ? "butterfly_4096_f64_cpu_s" : "butterfly_4096_f64_gpu_s",
               f.report.seconds);
      for (Index b : {4, 16, 64}) {
        if (n % b) continue;
        const auto m = factorize_monarch(W, b, b, std::max<Index>(1, n / (b * b)),
                                         {.compute_error = measure, .device = dev});
        row("monarch_b" + std::to_string(b), n, dev, m.report);
        if (n == 4096 && b == 64)
          record(dev == Device::cpu ? "monarch_4096_b64_cpu_s" : "monarch_4096_b64_gpu_s",
                 m.report.seconds);
      }
      const auto l =
          factorize_lowrank(W, {.rank = n / 16, .compute_error = measure, .device = dev});
      row("lowrank_r" + std::to_string(n / 16), n, dev, l.report);
    }
    if (n <= (quick ? 256 : 1024)) {  // BLAST on the CPU: small sizes only
      const auto b = factorize_blast(W, 4, 4, n / 16, {.steps = quick ? 20 : 100});
      row("blast_b4", n, Device::cpu, b.report);
    }
  }
  if (gpu && !quick) {
    const HostMatrix<float> W = butterfly_target<float>(16384);
    const auto f = factorize_ks_chain(W, butterfly_patterns(16384),
                                      {.compute_error = false, .device = Device::cuda});
    row("butterfly_f32", 16384, Device::cuda, f.report);
    record("butterfly_16384_f32_gpu_s", f.report.seconds);
  }

  // DFT recovery (bit-reversed columns).
  {
    const Index n = quick ? 256 : 1024;
    HostMatrix<std::complex<double>> F(n, n);
    for (Index j = 0; j < n; ++j)
      for (Index k = 0; k < n; ++k) {
        const double a = -2.0 * std::numbers::pi * double((j * k) % n) / double(n);
        F(j, k) = {std::cos(a), std::sin(a)};
      }
    const auto f = factorize_ks_chain(F, butterfly_patterns(n),
                                      {.column_permutation = bit_reversal_indices(n)});
    row("dft_c128", n, Device::cpu, f.report);
    record("dft_recovery_rel_err_f64", f.report.relative_error);
  }

  // Error versus parameters on structured matrices.
  const Index n = quick ? 256 : 1024;
  const std::vector<std::pair<std::string, HostMatrix<double>>> targets{
      {"rbf2d", rbf_grid(n)},
      {"laplacian2d", laplacian_2d(n)},
      {"dct", dct(n)},
      {"gaussian", gaussian<double>(n, n, 3)}};
  for (const auto& [name, A] : targets) {
    row(name + ":butterfly", n, Device::cpu, factorize_ks_chain(A, butterfly_patterns(n)).report);
    for (Index b : {4, 16})
      row(name + ":monarch_b" + std::to_string(b), n, Device::cpu,
          factorize_monarch(A, b, b, n / (b * b) * 2).report);
    for (Index r : {n / 64, n / 16, n / 4})
      row(name + ":lowrank_r" + std::to_string(r), n, Device::cpu,
          factorize_lowrank(A, {.rank = r}).report);
    row(name + ":blast_b4_r" + std::to_string(n / 16), n, Device::cpu,
        factorize_blast(A, 4, 4, n / 16, {.steps = quick ? 20 : 100}).report);
  }

  std::ofstream out(json);
  if (out) {
    out << "{\"device\": \"" << (gpu ? device_name(0) : "cpu only") << "\"";
    for (const auto& [key, value] : summary)
      out << ", \"" << key << "\": " << value;
    out << "}\n";
  }
  return 0;
}
