// bench/transform_bench: fast transforms on the GPU (issue #7): our Hadamard and DFT (KS
// chains: the fused chain kernel where the chain fits, the digit reversal as a row gather)
// against cuFFT (C2C and R2C) and against a copy of the same data, all in one run.
//
//   transform_bench [--batch B] [--reps R] [--csv FILE] [--json FILE]
//
// Rows: kind, n, dtype, batch, seconds, the copy time of the same data (read + write at the
// copy bandwidth measured in this run), time / copy, cuFFT C2C and R2C times where they
// apply. Signals are contiguous (PyTorch's (B, n) row-major = our ColMajor). fp32 only:
// half/bfloat16 are not in the library yet. The JSON holds hadamard_float_over_memcpy and
// dft_c64_over_cufft per n, and the 12 x 2^k and 28 x 2^k Hadamard time per element over
// the power-of-two one.
#include <complex>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "strop/strop.hpp"

#if STROP_HAVE_CUFFT
#include <cufft.h>
#endif

using namespace strop;

namespace {

struct Options {
  Index batch = 4096;
  int reps = 20;
  std::string csv = "transform-bench.csv";
  std::string json = "transform-summary.json";
};

template <class Operator, class T>
double time_transform(const Operator& A, Index batch, int reps, Context& ctx) {
  DeviceMatrix<T> x(A.cols(), batch, Layout::ColMajor, ctx),
      y(A.rows(), batch, Layout::ColMajor, ctx);
  fill_random_device(x.view(), 5, ctx);
  return median_device_seconds(
      ctx, [&] { apply(A, x.view(), y.view(), T(1), T(0), ctx); }, reps, 3);
}

// cuFFT's time for `batch` transforms of n points (C2C, or R2C when real_input); -1 without
// cuFFT.
double time_cufft(Index n, Index batch, bool real_input, int reps, Context& ctx) {
#if STROP_HAVE_CUFFT
  using C = std::complex<float>;
  DeviceMatrix<C> x(n, batch, Layout::ColMajor, ctx), y(n, batch, Layout::ColMajor, ctx);
  fill_random_device(x.view(), 9, ctx);
  cufftHandle plan;
  int size = static_cast<int>(n);
  if (cufftPlanMany(&plan, 1, &size, nullptr, 1, size, nullptr, 1, real_input ? size / 2 + 1 : size,
                    real_input ? CUFFT_R2C : CUFFT_C2C, static_cast<int>(batch)) != CUFFT_SUCCESS)
    return -1;
  cufftSetStream(plan, static_cast<cudaStream_t>(ctx.stream()));
  auto* in = reinterpret_cast<cufftComplex*>(x.view().data);
  auto* out = reinterpret_cast<cufftComplex*>(y.view().data);
  const double t = median_device_seconds(
      ctx,
      [&] {
        if (real_input) {
          cufftExecR2C(plan, reinterpret_cast<cufftReal*>(in), out);
        } else {
          cufftExecC2C(plan, in, out, CUFFT_FORWARD);
        }
      },
      reps, 3);
  cufftDestroy(plan);
  return t;
#else
  (void)n, (void)batch, (void)real_input, (void)reps, (void)ctx;
  return -1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (arg == "--batch") {
      opt.batch = std::stoll(next());
    } else if (arg == "--reps") {
      opt.reps = std::stoi(next());
    } else if (arg == "--csv") {
      opt.csv = next();
    } else if (arg == "--json") {
      opt.json = next();
    }
  }
  if (!cuda_available()) {
    std::printf("transform_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  const double bandwidth = measure_copy_bandwidth(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s\n", device_name(0), bandwidth * 1e-9);
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << bandwidth << "\n";
  csv << "kind,n,dtype,batch,seconds,t_copy,over_copy,t_cufft_c2c,t_cufft_r2c,over_cufft_c2c\n";
  const Index B = opt.batch;
  auto row = [&](const char* kind, Index n, const char* dtype, std::size_t bytes, double t,
                 double c2c, double r2c) {
    const double copy = 2.0 * double(bytes) * double(n) * double(B) / bandwidth;
    char line[256];
    std::snprintf(line, sizeof line, "%s,%lld,%s,%lld,%.6e,%.6e,%.3f,%.6e,%.6e,%.3f\n", kind,
                  (long long)n, dtype, (long long)B, t, copy, t / copy, c2c, r2c,
                  c2c > 0 ? t / c2c : -1.0);
    csv << line;
    std::fputs(line, stdout);
    return t / copy;
  };
  std::map<Index, double> hadamard_over_copy, dft_over_cufft, hadamard_per_element;
  double over12 = 0, over28 = 0;
  for (Index n = 256; n <= 32768; n *= 2) {
    const double th = time_transform<KSChain<float>, float>(hadamard<float>(n), B, opt.reps, ctx);
    hadamard_over_copy[n] = row("hadamard", n, "float32", sizeof(float), th, -1, -1);
    hadamard_per_element[n] = th / double(n);
    const double c2c = time_cufft(n, B, false, opt.reps, ctx);
    const double r2c = time_cufft(n, B, true, opt.reps, ctx);
    const auto f = dft<std::complex<float>>(n);
    const double td = time_transform<decltype(f), std::complex<float>>(f, B, opt.reps, ctx);
    row("dft", n, "complex64", sizeof(std::complex<float>), td, c2c, r2c);
    if (c2c > 0) dft_over_cufft[n] = td / c2c;
  }
  // 12 x 2^k and 28 x 2^k (no zero padding) against the power of two just above.
  for (auto [m, pow2] : {std::pair<Index, Index>{12, 16}, {28, 32}}) {
    const Index n = m * 4096 / pow2;  // 3072 and 3584, against 4096
    const double t = time_transform<KSChain<float>, float>(hadamard<float>(n), B, opt.reps, ctx);
    row(m == 12 ? "hadamard_12x2^k" : "hadamard_28x2^k", n, "float32", sizeof(float), t, -1, -1);
    (m == 12 ? over12 : over28) = (t / double(n)) / hadamard_per_element[4096];
  }
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\", \"batch\": " << B;
  auto write_map = [&](const char* key, const std::map<Index, double>& values) {
    json << ", \"" << key << "\": {";
    bool first = true;
    for (const auto& [n, v] : values) {
      json << (first ? "" : ", ") << "\"" << n << "\": " << v;
      first = false;
    }
    json << "}";
  };
  write_map("hadamard_float_over_memcpy", hadamard_over_copy);
  write_map("dft_c64_over_cufft", dft_over_cufft);
  json << ", \"hadamard_12x_over_pow2_per_elem\": " << over12
       << ", \"hadamard_28x_over_pow2_per_elem\": " << over28 << "}\n";
  return 0;
}
