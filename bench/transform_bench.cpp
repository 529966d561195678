// bench/transform_bench: fast transforms on the GPU (issue #7): our Hadamard and DFT (KS
// chains: the fused chain kernel where the chain fits, the digit reversal as a row gather)
// against cuFFT (C2C and R2C) and against a copy of the same data, all in one run.
//
//   transform_bench [--batch B] [--reps R] [--csv FILE] [--json FILE] [--cpu] [--probe N]
//
// --cpu measures on the host instead: our chains (Eigen, OpenMP) against FFTW's C2C and R2C
// with as many threads (fftw3f_omp), n = 256 ... 16384, B = 256 by default; JSON keys
// dft_c64_cpu_over_fftw and hadamard_cpu_seconds.
//
// Rows: kind, n, dtype, batch, seconds, the copy time of the same data (read + write at the
// copy bandwidth measured in this run) and time / copy, the time of an actual cudaMemcpy of
// the same data (timed in alternation with the row's call: medians of each) and
// time / memcpy, cuFFT C2C and R2C times where they apply. Signals are contiguous
// (PyTorch's (B, n) row-major = our ColMajor) except in the hadamard_rowmajor rows. Hadamard runs
// in float32 (also through the generic chain path, as hadamard_generic_chain), float16 and bfloat16
// (apply_reduced_precision); the DFT in complex64. The JSON holds
// hadamard_{half,bf16,float,rowmajor_half}_over_memcpy (against the measured memcpy) and
// dft_c64_over_cufft per n, and the 12 x 2^k and 28 x 2^k Hadamard time per element over the
// power-of-two one (half, the worse of n near 4096 and near 32768; all in
// odd_over_pow2_per_elem). The 16-bit rows take the default path: the tensor-core kernel for
// these contiguous signals. Rows hadamard_cuda_cores (JSON hadamard_cuda_cores_half_over_memcpy
// and odd_over_pow2_per_elem's *_cuda_cores_* keys) time the CUDA-core kernel it replaced there,
// called directly.
#include <algorithm>
#include <complex>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "bench_support.hpp"
#if STROP_BENCH_HAVE_CUDA_CORE_HADAMARD
#include "operators/transforms/hadamard_device.hpp"
#endif
#include "strop/strop.hpp"

#if STROP_HAVE_CUFFT
#include <cufft.h>
#endif
#if STROP_HAVE_FFTWF
#include <fftw3.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

using namespace strop;

namespace {

struct Options {
  Index batch = 4096;
  int reps = 20;
  std::string csv = "transform-bench.csv";
  std::string json = "transform-summary.json";
  bool cpu = false;
  Index probe = 0;  // --probe N: apply the half Hadamard of n = N three times, for a profiler
};

int omp_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// FFTW's time for `batch` float transforms of n points (C2C, or R2C when real_input),
// planned with FFTW_MEASURE on all OpenMP threads; -1 without FFTW.
double time_fftw(Index n, Index batch, bool real_input, int reps) {
#if STROP_HAVE_FFTWF
  static const bool threads_ready = fftwf_init_threads() != 0;
  if (threads_ready) fftwf_plan_with_nthreads(omp_threads());
  const int size = static_cast<int>(n), count = static_cast<int>(batch);
  auto* in = fftwf_alloc_complex(static_cast<std::size_t>(n * batch));
  auto* out = fftwf_alloc_complex(static_cast<std::size_t>(n * batch));
  fftwf_plan plan =
      real_input ? fftwf_plan_many_dft_r2c(1, &size, count, reinterpret_cast<float*>(in), nullptr,
                                           1, size, out, nullptr, 1, size / 2 + 1, FFTW_MEASURE)
                 : fftwf_plan_many_dft(1, &size, count, in, nullptr, 1, size, out, nullptr, 1, size,
                                       FFTW_FORWARD, FFTW_MEASURE);
  for (Index i = 0; i < n * batch; ++i)
    in[i][0] = in[i][1] = float(i % 7) - 3.0f;  // planning may have overwritten the input
  const double t = median_host_seconds([&] { fftwf_execute(plan); }, reps, 1);
  fftwf_destroy_plan(plan);
  fftwf_free(in);
  fftwf_free(out);
  return t;
#else
  (void)n, (void)batch, (void)real_input, (void)reps;
  return -1;
#endif
}

// The host rows: our chains against FFTW, written to csv and json.
void run_cpu(const Options& opt, Index batch) {
  std::ofstream csv(opt.csv);
  csv << "# device=cpu threads=" << omp_threads() << "\n";
  csv << "kind,n,dtype,batch,seconds,t_fftw_c2c,t_fftw_r2c,over_fftw_c2c\n";
  std::map<Index, double> over_fftw, hadamard_seconds;
  for (Index n = 256; n <= 16384; n *= 2) {
    const HostMatrix<float> xr = HostMatrix<float>::Random(n, batch);
    HostMatrix<float> yr(n, batch);
    const auto h = hadamard<float>(n);
    const double th = median_host_seconds([&] { apply(h, view(xr), view(yr)); }, opt.reps, 1);
    hadamard_seconds[n] = th;
    const HostMatrix<std::complex<float>> xc = HostMatrix<std::complex<float>>::Random(n, batch);
    HostMatrix<std::complex<float>> yc(n, batch);
    const auto f = dft<std::complex<float>>(n);
    const double td = median_host_seconds([&] { apply(f, view(xc), view(yc)); }, opt.reps, 1);
    const double c2c = time_fftw(n, batch, false, opt.reps);
    const double r2c = time_fftw(n, batch, true, opt.reps);
    if (c2c > 0) over_fftw[n] = td / c2c;
    char line[256];
    std::snprintf(line, sizeof line, "hadamard,%lld,float32,%lld,%.6e,-1,-1,-1\n", (long long)n,
                  (long long)batch, th);
    csv << line;
    std::fputs(line, stdout);
    std::snprintf(line, sizeof line, "dft,%lld,complex64,%lld,%.6e,%.6e,%.6e,%.3f\n", (long long)n,
                  (long long)batch, td, c2c, r2c, c2c > 0 ? td / c2c : -1.0);
    csv << line;
    std::fputs(line, stdout);
  }
  std::ofstream json(opt.json);
  json << "{\"device\": \"cpu\", \"threads\": " << omp_threads() << ", \"batch\": " << batch;
  for (const auto& [key, values] :
       {std::pair<const char*, const std::map<Index, double>*>{"dft_c64_cpu_over_fftw", &over_fftw},
        {"hadamard_cpu_seconds", &hadamard_seconds}}) {
    json << ", \"" << key << "\": {";
    bool first = true;
    for (const auto& [n, v] : *values) {
      json << (first ? "" : ", ") << "\"" << n << "\": " << v;
      first = false;
    }
    json << "}";
  }
  json << "}\n";
}

// Our DFT of `batch` contiguous n-point signals, a cudaMemcpy of the same bytes and cuFFT's
// C2C and R2C on the same signals (where cuFFT is linked; -1 otherwise), timed in
// alternation: medians of each.
struct DftTimes {
  bench::CallAndMemcpy ours;
  double c2c = -1, r2c = -1;
};
template <class Operator>
DftTimes time_dft_beside_cufft(const Operator& f, Index n, Index batch, int reps, Context& ctx) {
  using C = std::complex<float>;
  DeviceMatrix<C> x(n, batch, Layout::ColMajor, ctx), y(n, batch, Layout::ColMajor, ctx),
      copy(n, batch, Layout::ColMajor, ctx);
  fill_random_device(x.view(), 9, ctx);
  std::vector<std::function<void()>> works{
      [&] { apply(f, ConstView<C>(x.view()), y.view(), C(1), C(0), ctx); },
      [&] {
        detail::copy_bytes(copy.view().data, MemorySpace::Device, x.view().data,
                           MemorySpace::Device, sizeof(C) * std::size_t(n * batch), ctx);
      }};
#if STROP_HAVE_CUFFT
  cufftHandle plans[2];
  bool planned[2] = {false, false};
  int size = static_cast<int>(n);
  for (int real_input = 0; real_input < 2; ++real_input) {
    planned[real_input] =
        cufftPlanMany(&plans[real_input], 1, &size, nullptr, 1, size, nullptr, 1,
                      real_input ? size / 2 + 1 : size, real_input ? CUFFT_R2C : CUFFT_C2C,
                      static_cast<int>(batch)) == CUFFT_SUCCESS;
    if (!planned[real_input]) continue;
    cufftSetStream(plans[real_input], static_cast<cudaStream_t>(ctx.stream()));
  }
  auto* in = reinterpret_cast<cufftComplex*>(x.view().data);
  auto* out = reinterpret_cast<cufftComplex*>(y.view().data);
  if (planned[0]) works.push_back([&] { cufftExecC2C(plans[0], in, out, CUFFT_FORWARD); });
  if (planned[1])
    works.push_back([&] { cufftExecR2C(plans[1], reinterpret_cast<cufftReal*>(in), out); });
#endif
  const std::vector<double> t = median_device_seconds_each(ctx, works, reps, 3);
  DftTimes times;
  times.ours = {t[0], t[1]};
#if STROP_HAVE_CUFFT
  std::size_t next = 2;
  for (int real_input = 0; real_input < 2; ++real_input) {
    if (!planned[real_input]) continue;
    (real_input ? times.r2c : times.c2c) = t[next++];
    cufftDestroy(plans[real_input]);
  }
#endif
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (bench::read_common_flag(arg, next, opt)) continue;
    if (arg == "--batch") {
      opt.batch = std::stoll(next());
    } else if (arg == "--cpu") {
      opt.cpu = true;
    } else if (arg == "--probe") {
      opt.probe = std::stoll(next());
    }
  }
  if (opt.cpu) {
    run_cpu(opt, opt.batch == 4096 ? 256 : opt.batch);
    return 0;
  }
  if (!cuda_available()) {
    std::printf("transform_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  if (opt.probe > 0) {
    const KSChain<float> h = hadamard<float>(opt.probe);
    DeviceMatrix<strop::half> x(opt.probe, opt.batch, Layout::ColMajor, ctx),
        y(opt.probe, opt.batch, Layout::ColMajor, ctx);
    fill_random_device(x.view(), 5, ctx);
    for (int i = 0; i < 3; ++i)
      apply_reduced_precision<strop::half>(h, Op::NoTrans, x.view(), y.view());
    ctx.synchronize();
    return 0;
  }
  const double bandwidth = measure_copy_bandwidth(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s\n", device_name(0), bandwidth * 1e-9);
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << bandwidth << "\n";
  csv << "kind,n,dtype,batch,seconds,t_copy,over_copy,t_memcpy,over_memcpy,t_cufft_c2c,"
         "t_cufft_r2c,over_cufft_c2c\n";
  const Index B = opt.batch;
  // over_copy: against reading and writing the data at the copy bandwidth (a large copy's);
  // over_memcpy: against an actual cudaMemcpy of the same data (its launch cost included),
  // timed in alternation with the row's call (bench::time_device_call_and_memcpy).
  // Returns time / memcpy.
  auto row = [&](const char* kind, Index n, const char* dtype, std::size_t bytes,
                 bench::CallAndMemcpy times, double c2c, double r2c) {
    const double copy = 2.0 * double(bytes) * double(n) * double(B) / bandwidth;
    const double t = times.call, measured = times.memcpy;
    char line[320];
    std::snprintf(line, sizeof line, "%s,%lld,%s,%lld,%.6e,%.6e,%.3f,%.6e,%.3f,%.6e,%.6e,%.3f\n",
                  kind, (long long)n, dtype, (long long)B, t, copy, t / copy, measured,
                  t / measured, c2c, r2c, c2c > 0 ? t / c2c : -1.0);
    csv << line;
    std::fputs(line, stdout);
    return t / measured;
  };
  // Hadamard in float (the Walsh-Hadamard kernel, and for comparison the generic chain path
  // the float chain took before it, forced with KSAlgorithm::Fused), half and bfloat16.
  std::map<Index, double> hadamard_over_copy, hadamard_half_over_copy, hadamard_bf16_over_copy,
      hadamard_rowmajor_half_over_copy, dft_over_cufft, dft_rowmajor_over_cufft;
  std::map<Index, double> half_per_element, float_per_element, hadamard_half_over_bandwidth;
  // cuda_cores: the CUDA-core kernel called directly (the default path takes the tensor-core
  // kernel for contiguous 16-bit signals).
  auto time_hadamard = [&](Index n, Layout layout, const char* dtype, bool cuda_cores = false) {
    const KSChain<float> h = hadamard<float>(n);
    if (std::string(dtype) == "float32")
      return bench::time_device_call_and_memcpy<float>(
          n, n, B, layout, opt.reps, ctx,
          [&](ConstView<float> x, MatrixView<float> y) { apply(h, x, y, 1.0f, 0.0f, ctx); });
    auto run = [&](auto storage) {
      using S = decltype(storage);
#if !STROP_BENCH_HAVE_CUDA_CORE_HADAMARD
      if (cuda_cores) return bench::CallAndMemcpy{-1.0, -1.0};
#endif
      return bench::time_device_call_and_memcpy<S>(
          n, n, B, layout, opt.reps, ctx, [&](ConstView<S> x, MatrixView<S> y) {
#if STROP_BENCH_HAVE_CUDA_CORE_HADAMARD
            if (cuda_cores)
              return detail::hadamard_cuda_core_apply<S>(*h.hadamard_form(), Op::NoTrans, x, y,
                                                         1.0f, 0.0f, ctx);
#endif
            apply_reduced_precision<S>(h, Op::NoTrans, x, y);
          });
    };
    return std::string(dtype) == "float16" ? run(strop::half{}) : run(strop::bfloat16{});
  };
  std::map<Index, double> cuda_cores_half_over_memcpy, cuda_cores_half_per_element;
  for (Index n = 256; n <= 32768; n *= 2) {
    const auto th = time_hadamard(n, Layout::ColMajor, "float32");
    hadamard_over_copy[n] = row("hadamard", n, "float32", sizeof(float), th, -1, -1);
    float_per_element[n] = th.call / double(n);
    {
      const KSAlgorithmGuard generic(KSAlgorithm::Fused);
      row("hadamard_generic_chain", n, "float32", sizeof(float),
          time_hadamard(n, Layout::ColMajor, "float32"), -1, -1);
    }
    const auto t16 = time_hadamard(n, Layout::ColMajor, "float16");
    hadamard_half_over_copy[n] = row("hadamard", n, "float16", 2, t16, -1, -1);
    hadamard_half_over_bandwidth[n] = t16.call / (2.0 * 2.0 * double(n) * double(B) / bandwidth);
    half_per_element[n] = t16.call / double(n);
    hadamard_bf16_over_copy[n] =
        row("hadamard", n, "bfloat16", 2, time_hadamard(n, Layout::ColMajor, "bfloat16"), -1, -1);
    const auto cc16 = time_hadamard(n, Layout::ColMajor, "float16", true);
    cuda_cores_half_over_memcpy[n] = row("hadamard_cuda_cores", n, "float16", 2, cc16, -1, -1);
    cuda_cores_half_per_element[n] = cc16.call / double(n);
    hadamard_rowmajor_half_over_copy[n] =
        row("hadamard_rowmajor", n, "float16", 2, time_hadamard(n, Layout::RowMajor, "float16"), -1,
            -1);
    const auto f = dft<std::complex<float>>(n);
    using C = std::complex<float>;
    const DftTimes dft_times = time_dft_beside_cufft(f, n, B, opt.reps, ctx);
    const double c2c = dft_times.c2c, r2c = dft_times.r2c;
    const auto td = dft_times.ours;
    row("dft", n, "complex64", sizeof(C), td, c2c, r2c);
    // Batch-contiguous signals (against the same cuFFT C2C on contiguous ones).
    const auto tr = bench::time_device_call_and_memcpy<C>(
        n, n, B, Layout::RowMajor, opt.reps, ctx,
        [&](ConstView<C> x, MatrixView<C> y) { apply(f, x, y, C(1), C(0), ctx); });
    row("dft_rowmajor", n, "complex64", sizeof(C), tr, c2c, r2c);
    if (c2c > 0) dft_rowmajor_over_cufft[n] = tr.call / c2c;
    if (c2c > 0) dft_over_cufft[n] = td.call / c2c;
  }
  // Fixed cost per call: one call timed alone against 20 queued back to back (per call), for
  // the half Hadamard and for a cudaMemcpy of the same bytes (the launch cost in each).
  for (Index n : {Index(256), Index(8192)}) {
    const KSChain<float> h = hadamard<float>(n);
    DeviceMatrix<strop::half> x(n, B, Layout::ColMajor, ctx), y(n, B, Layout::ColMajor, ctx);
    fill_random_device(x.view(), 5, ctx);
    auto single_and_queued = [&](auto once) {
      const double single = median_device_seconds(ctx, once, opt.reps, 3);
      const double queued = median_device_seconds(
                                ctx,
                                [&] {
                                  for (int i = 0; i < 20; ++i)
                                    once();
                                },
                                opt.reps, 1) /
                            20;
      return std::pair{single, queued};
    };
    const auto [single, queued] = single_and_queued(
        [&] { apply_reduced_precision<strop::half>(h, Op::NoTrans, x.view(), y.view()); });
    const auto [copy_single, copy_queued] = single_and_queued([&] {
      detail::copy_bytes(y.view().data, MemorySpace::Device, x.view().data, MemorySpace::Device,
                         std::size_t(n * B) * 2, ctx);
    });
    std::printf(
        "# probe hadamard half n=%lld: one call %.3e s, queued %.3e s per call; "
        "cudaMemcpy one call %.3e s, queued %.3e s\n",
        (long long)n, single, queued, copy_single, copy_queued);
  }
  // 12 x 2^k and 28 x 2^k (no zero padding) against the power of two just above, per element.
  std::map<std::string, double> odd_over_pow2;
  for (auto [m, pow2] : {std::pair<Index, Index>{12, 16}, {28, 32}}) {
    for (Index big : {Index(4096), Index(32768)}) {
      const Index n = m * big / pow2;  // 3072, 3584 against 4096; 24576, 28672 against 32768
      const std::string kind = m == 12 ? "hadamard_12x2^k" : "hadamard_28x2^k";
      const auto t16 = time_hadamard(n, Layout::ColMajor, "float16");
      row(kind.c_str(), n, "float16", 2, t16, -1, -1);
      const auto t32 = time_hadamard(n, Layout::ColMajor, "float32");
      row(kind.c_str(), n, "float32", sizeof(float), t32, -1, -1);
      const auto cc16 = time_hadamard(n, Layout::ColMajor, "float16", true);
      row((kind + "_cuda_cores").c_str(), n, "float16", 2, cc16, -1, -1);
      const std::string at = std::to_string(big);
      odd_over_pow2[std::to_string(m) + "x_cuda_cores_half_vs_" + at] =
          (cc16.call / double(n)) / cuda_cores_half_per_element[big];
      odd_over_pow2[std::to_string(m) + "x_half_vs_" + at] =
          (t16.call / double(n)) / half_per_element[big];
      odd_over_pow2[std::to_string(m) + "x_float_vs_" + at] =
          (t32.call / double(n)) / float_per_element[big];
    }
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
  write_map("hadamard_half_over_memcpy", hadamard_half_over_copy);
  write_map("hadamard_half_over_copy_bandwidth", hadamard_half_over_bandwidth);
  write_map("hadamard_bf16_over_memcpy", hadamard_bf16_over_copy);
  write_map("hadamard_float_over_memcpy", hadamard_over_copy);
  write_map("hadamard_rowmajor_half_over_memcpy", hadamard_rowmajor_half_over_copy);
  write_map("hadamard_cuda_cores_half_over_memcpy", cuda_cores_half_over_memcpy);
  write_map("dft_c64_over_cufft", dft_over_cufft);
  write_map("dft_c64_rowmajor_over_cufft", dft_rowmajor_over_cufft);
  // The keys: half, the worse of the two sizes compared.
  const double over12 =
      std::max(odd_over_pow2["12x_half_vs_4096"], odd_over_pow2["12x_half_vs_32768"]);
  const double over28 =
      std::max(odd_over_pow2["28x_half_vs_4096"], odd_over_pow2["28x_half_vs_32768"]);
  json << ", \"hadamard_12x_over_pow2_per_elem\": " << over12
       << ", \"hadamard_28x_over_pow2_per_elem\": " << over28 << ", \"odd_over_pow2_per_elem\": {";
  bool first = true;
  for (const auto& [key, v] : odd_over_pow2) {
    json << (first ? "" : ", ") << "\"" << key << "\": " << v;
    first = false;
  }
  json << "}}\n";
  return 0;
}
