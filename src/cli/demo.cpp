// `strop demo`: the FFT and the fast Walsh-Hadamard transform, rediscovered from their dense
// matrices. Builds the n-point DFT (complex64) and the n x n Hadamard matrix (float32),
// factorizes each into the square-dyadic butterfly (log2 n Kronecker-sparse factors of 2x2
// blocks), saves both to HDF5, loads them back, applies them to a batch of synthetic signals
// on the CPU (and the GPU when there is one) and compares with the dense matrices.
#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/device_choice.hpp"
#include "cli/locations.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

struct DemoOptions {
  Index size = 4096;
  Index batch = 64;
  std::string device = "auto";
  std::string output = "strop-demo.h5";
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// F[i][j] = exp(-2 pi i j / n), from a table of the n roots of unity computed in double.
HostMatrix<std::complex<float>> dft_matrix(Index n) {
  std::vector<std::complex<float>> roots(static_cast<std::size_t>(n));
  for (Index k = 0; k < n; ++k)
    roots[std::size_t(k)] =
        std::complex<float>(std::polar(1.0, -2 * std::numbers::pi * double(k) / double(n)));
  HostMatrix<std::complex<float>> f(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i)
      f(i, j) = roots[std::size_t(i * j % n)];
  return f;
}

// The Sylvester-Hadamard matrix H[i][j] = (-1)^popcount(i & j).
HostMatrix<float> hadamard_matrix(Index n) {
  HostMatrix<float> h(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i)
      h(i, j) = std::popcount(std::uint64_t(i & j)) % 2 ? -1.f : 1.f;
  return h;
}

// Each signal (one per column): three cosines at random frequencies below n/2 with random
// amplitudes and phases, plus white noise of standard deviation 0.1.
HostMatrix<float> synthetic_signals(Index n, Index batch, std::mt19937& rng,
                                    std::vector<Index>& first_frequencies) {
  std::uniform_int_distribution<Index> frequency(1, n / 2 - 1);
  std::uniform_real_distribution<double> amplitude(0.5, 2.0), phase(0, 2 * std::numbers::pi);
  std::normal_distribution<float> noise(0.f, 0.1f);
  HostMatrix<float> x(n, batch);
  for (Index s = 0; s < batch; ++s) {
    for (Index t = 0; t < n; ++t)
      x(t, s) = noise(rng);
    std::vector<Index> used;
    for (int k = 0; k < 3; ++k) {
      Index f = frequency(rng);
      for (int tries = 0; tries < 8 && std::count(used.begin(), used.end(), f); ++tries)
        f = frequency(rng);  // distinct when n allows
      used.push_back(f);
      const double a = amplitude(rng), p = phase(rng);
      if (s == 0) first_frequencies.push_back(f);
      for (Index t = 0; t < n; ++t)
        x(t, s) += float(a * std::cos(2 * std::numbers::pi * double(f * t % n) / double(n) + p));
    }
  }
  std::sort(first_frequencies.begin(), first_frequencies.end());
  return x;
}

// Same node types and shapes, and bit-identical parameters.
template <class T>
bool identical(const AnyOperator<T>& a, const AnyOperator<T>& b) {
  if (std::string(a.node_type()) != b.node_type() || a.rows() != b.rows() || a.cols() != b.cols())
    return false;
  if (const auto* ka = a.template as<KSChain<T>>()) {
    const auto* kb = b.template as<KSChain<T>>();
    if (kb == nullptr || ka->size() != kb->size()) return false;
    for (std::size_t i = 0; i < ka->size(); ++i)
      if (ka->factors()[i].pattern() != kb->factors()[i].pattern() ||
          ka->factors()[i].values() != kb->factors()[i].values())
        return false;
    return true;
  }
  if (const auto* pa = a.template as<Permutation<T>>()) {
    const auto* pb = b.template as<Permutation<T>>();
    return pb != nullptr && pa->indices() == pb->indices();
  }
  const auto ca = a.children(), cb = b.children();
  if (ca.size() != cb.size()) return false;
  if (ca.empty()) return (a.to_dense().array() == b.to_dense().array()).all();
  for (std::size_t i = 0; i < ca.size(); ++i)
    if (!identical(ca[i], cb[i])) return false;
  return true;
}

double relative_error(const auto& y, const auto& reference) {
  return double((y - reference).norm() / reference.norm());
}

template <class T>
using BatchLast = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Measurement {
  std::string device;
  double apply_error = 0;
  double dense_seconds = 0;
  double structured_seconds = 0;
};

struct CaseResult {
  std::string name;
  double factor_error = 0;
  Index parameters = 0;
  Index dense_parameters = 0;
  std::vector<Measurement> measurements;
};

// Factorize, save, load back, apply: everything the demo shows for one transform.
template <class T>
CaseResult run_case(const std::string& name, const std::string& h5_name, const HostMatrix<T>& dense,
                    bool bit_reversed_columns, const HostMatrix<T>& x, const DemoOptions& options,
                    bool gpu, HostMatrix<T>* structured_output = nullptr) {
  const Index n = dense.rows();
  CaseResult result{name, 0, 0, n * n, {}};

  // 1. The dense matrix is a butterfly (once its columns are bit-reversed, for the DFT).
  KSFactorizeOptions fo;
  if (bit_reversed_columns) fo.column_permutation = bit_reversal_indices(n);
  const std::vector<KSPattern> patterns = square_dyadic_chain(n);
  Progress progress("factorizing the " + name, 0);
  const KSFactorization<T> fit = factorize_ks_chain(dense, patterns, fo);
  progress.finish();
  // A(:, q) = chain, so A = chain * P with P = Permutation(q) ((P X)[i] = X[q[i]]).
  const AnyOperator<T> op = bit_reversed_columns
                                ? AnyOperator<T>(fit.chain * Permutation<T>(fo.column_permutation))
                                : AnyOperator<T>(fit.chain);
  result.factor_error = fit.report.relative_error;
  result.parameters = op.parameter_count();
  std::printf("%s: %zu butterfly factors found in %.2f s%s, relative error %s\n", name.c_str(),
              patterns.size(), fit.report.seconds,
              bit_reversed_columns ? " (columns in bit-reversed order)" : "",
              format_error(fit.report.relative_error).c_str());

  // 2. Save with where it came from, load back, check that nothing changed.
  io::save(options.output, op, h5_name,
           io::Provenance{fit.report.method, fit.report.relative_error, n, n,
                          "strop demo: closed-form " + name + " matrix"});
  const AnyOperator<T> loaded = io::load<T>(options.output, h5_name);
  require<IoError>(identical(op, loaded), "demo: the ", name, " loaded from ", options.output,
                   " differs from the one saved");
  std::printf("  saved as %s:%s and loaded back: identical\n", options.output.c_str(),
              h5_name.c_str());

  // 3. Apply the loaded operator and the dense matrix to the same signals, stored
  // batch-last (RowMajor): the layout the KS kernels prefer, and as fast for Eigen's GEMM.
  Measurement cpu{"cpu"};
  const BatchLast<T> xr = x;
  BatchLast<T> y_dense(n, x.cols()), y(n, x.cols());
  cpu.dense_seconds = median_host_seconds([&] { y_dense.noalias() = dense * xr; }, 3, 1);
  cpu.structured_seconds = median_host_seconds([&] { apply(loaded, view(xr), view(y)); }, 9, 2);
  cpu.apply_error = relative_error(y, y_dense);
  result.measurements.push_back(cpu);
  if (structured_output) *structured_output = y;

  if (gpu) {
    Context& ctx = default_context();
    Measurement g{"cuda"};
    const Dense<T> dense_op(dense);
    const DeviceMatrix<T> xd = to_device(x, Layout::RowMajor);
    DeviceMatrix<T> yd(n, x.cols(), Layout::RowMajor), yd_dense(n, x.cols(), Layout::RowMajor);
    g.dense_seconds = median_device_seconds(
        ctx, [&] { apply(dense_op, xd.view(), yd_dense.view()); }, 20, 3);
    g.structured_seconds = median_device_seconds(
        ctx, [&] { apply(loaded, xd.view(), yd.view()); }, 20, 3);
    g.apply_error = relative_error(BatchLast<T>(yd.to_host()), y_dense);
    result.measurements.push_back(g);
  }
  return result;
}

// The `count` bins of largest magnitude in y[1 .. n/2), ascending.
std::vector<Index> strongest_bins(const HostMatrix<std::complex<float>>& y, Index count) {
  std::vector<Index> bins;
  for (Index k = 1; k < y.rows() / 2; ++k)
    bins.push_back(k);
  count = std::min<Index>(count, Index(bins.size()));
  std::partial_sort(bins.begin(), bins.begin() + count, bins.end(),
                    [&](Index a, Index b) { return std::abs(y(a, 0)) > std::abs(y(b, 0)); });
  bins.resize(std::size_t(count));
  std::sort(bins.begin(), bins.end());
  return bins;
}

std::string join(const std::vector<Index>& values) {
  std::string out;
  for (Index v : values)
    out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

int run_demo(const DemoOptions& options) {
  const Index n = options.size;
  require<ShapeError>(n >= 8 && std::has_single_bit(std::uint64_t(n)), "demo: --size ", n,
                      " must be a power of two >= 8");
  // An existing file keeps its other operators (the save replaces only "dft" and
  // "hadamard"); a file that is not HDF5 is refused, never overwritten.
  require_operator_output(options.output);
  const bool gpu = use_gpu(options.device, "demo");
  const auto start = Clock::now();
  std::printf("strop demo: the %lld-point DFT and Hadamard transform, found as butterflies\n",
              static_cast<long long>(n));
  std::printf("%lld signals (stored batch-last), CPU: %d thread(s), GPU: %s\n\n",
              static_cast<long long>(options.batch), Eigen::nbThreads(),
              gpu ? device_name(0) : "not used");

  std::mt19937 rng(2026);
  std::vector<Index> planted;
  const HostMatrix<float> x = synthetic_signals(n, options.batch, rng, planted);
  const HostMatrix<std::complex<float>> xc = x.cast<std::complex<float>>();

  HostMatrix<std::complex<float>> spectrum;
  std::vector<CaseResult> results;
  results.push_back(run_case<std::complex<float>>("DFT (complex64)", "dft", dft_matrix(n), true, xc,
                                                  options, gpu, &spectrum));
  results.push_back(run_case<float>("Hadamard (float32)", "hadamard", hadamard_matrix(n), false, x,
                                    options, gpu));

  std::printf(
      "\nApplying each to %lld signals (3 cosines + noise each), against the dense "
      "matrix:\n\n",
      static_cast<long long>(options.batch));
  Table table({"operator", "device", "fact. error", "apply error", "params", "compression",
               "dense ms", "butterfly ms", "speedup"});
  for (const CaseResult& r : results)
    for (const Measurement& m : r.measurements)
      table.add_row({r.name, m.device, format_error(r.factor_error), format_error(m.apply_error),
                     format_count(double(r.parameters)),
                     format_ratio(double(r.dense_parameters) / double(r.parameters)),
                     format_ms(m.dense_seconds), format_ms(m.structured_seconds),
                     format_ratio(m.dense_seconds / m.structured_seconds)});
  table.print();

  std::printf("\nSignal 0: cosines planted at frequencies %s; strongest bins of its DFT: %s\n",
              join(planted).c_str(), join(strongest_bins(spectrum, 3)).c_str());
  if (!gpu) std::printf("GPU: none used (--device cuda on a machine with one)\n");
  std::printf("Wrote %s (%s bytes); try: strop info %s\n", options.output.c_str(),
              format_count(double(std::filesystem::file_size(options.output))).c_str(),
              options.output.c_str());
  std::printf("Total %.1f s\n", seconds_since(start));
  return 0;
}

}  // namespace

Subcommand add_demo_command(CLI::App& parent) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* app = parent.add_subcommand(
      "demo",
      "Rediscover the FFT and the fast Hadamard transform: factorize the dense n-point DFT\n"
      "and Hadamard matrices into butterflies, save them to HDF5, load them back, apply them\n"
      "to synthetic signals on the CPU (and the GPU) and compare with the dense matrices.");
  app->add_option("-n,--size", options->size, "Transform size n (a power of two)")
      ->check(CLI::Range(Index(8), Index(1) << 14))
      ->capture_default_str();
  app->add_option("-b,--batch", options->batch, "Number of signals")
      ->check(CLI::Range(Index(1), Index(1) << 16))
      ->capture_default_str();
  add_device_option(*app, options->device, true);
  app->add_option("-o,--output", options->output,
                  "HDF5 file to write the two operators to (other operators in it are kept)")
      ->capture_default_str();
  return {app, [options] { return run_demo(*options); }};
}

}  // namespace strop::cli
