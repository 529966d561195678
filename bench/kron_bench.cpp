// bench/kron_bench: Kron-matmul on the GPU on FastKron's shapes (PPoPP 2024, Table 1:
// M = 1024 signals, 8^6, 16^5, 32^4, 64^3; Table 3: M = 16, 8^8, 16^6, 32^5, 64^4), float and
// double, against our shuffle baseline (reshape + cuBLAS GEMM + transpose per factor), with
// the copy bandwidth and the GEMM rate measured in the same run.
//
//   kron_bench [--reps R] [--csv FILE] [--json FILE] [--quick] [--rowmajor]
//
// Every row: shape, dtype, layout, the median time (CUDA events, R runs after 3 warm-ups) of
// Auto (ours), Fused (fuse every small factor), Sliced (one factor per launch) and Shuffle,
// TFLOP/s with FastKron's count 2*M*sum_f K_f*Q_f, the roofline time
// max((read X + write Y) / copy bandwidth, flops / GEMM rate), and the largest error of ours
// and of the shuffle on sampled outputs against a CPU dot product in long double (relative
// to sum |a_jk x_k|, so cancellation cannot inflate it). --quick divides M by 16.
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "strop/strop.hpp"

using namespace strop;

namespace {

struct Options {
  int reps = 20;
  bool quick = false;
  bool rowmajor = false;
  std::string csv = "kron-bench.csv";
  std::string json = "kron-summary.json";
};

struct Case {
  std::string table;
  Index P, N, M;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

template <class T>
double gemm_peak(Context& ctx) {
  const Index n = 8192;
  DeviceMatrix<T> a(n, n), x(n, n), y(n, n);
  fill_random_device(x.view(), 2, ctx);
  const Dense<T> A(HostMatrix<T>::Random(n, n));
  const double t = median_device_seconds(
      ctx, [&] { apply(A, x.view(), y.view()); }, 5, 2);
  return A.flops(n) / t;
}

template <class T>
HostMatrix<T> download(const DeviceMatrix<T>& m, Context& ctx) {
  return m.to_host(ctx);
}

// Largest error over sampled outputs y[j, b] of the current Y.
template <class T>
double sampled_error(const std::vector<HostMatrix<T>>& factors, const DeviceMatrix<T>& x,
                     const DeviceMatrix<T>& y, Context& ctx, std::mt19937& gen) {
  const Index K = x.rows(), M = x.cols(), J = y.rows();
  double worst = 0;
  std::vector<T> column(K), all;
  T got{};
  for (int sample = 0; sample < 3; ++sample) {
    const Index b = std::uniform_int_distribution<Index>(0, M - 1)(gen);
    const Index j = std::uniform_int_distribution<Index>(0, J - 1)(gen);
    // Column b of X (contiguous in ColMajor; strided in RowMajor: copy element by element
    // only for the small sample here).
    if (x.layout() == Layout::ColMajor) {
      detail::copy_bytes(column.data(), MemorySpace::Host, x.data() + b * K, MemorySpace::Device,
                         sizeof(T) * K, ctx);
    } else {
      if (all.empty()) {
        all.resize(K * M);
        detail::copy_bytes(all.data(), MemorySpace::Host, x.data(), MemorySpace::Device,
                           sizeof(T) * K * M, ctx);
      }
      for (Index k = 0; k < K; ++k)
        column[k] = all[k * M + b];
    }
    const Index y_index = y.layout() == Layout::ColMajor ? j + b * J : j * M + b;
    detail::copy_bytes(&got, MemorySpace::Host, y.data() + y_index, MemorySpace::Device, sizeof(T),
                       ctx);
    // Row j of F_1 ⊗ ... ⊗ F_n, built digit by digit (first factor most significant).
    std::vector<long double> row = {1.0L};
    Index rest = J;
    for (const auto& f : factors) {
      rest /= f.rows();
      const Index jf = (j / rest) % f.rows();
      std::vector<long double> next(row.size() * f.cols());
      for (std::size_t r = 0; r < row.size(); ++r)
        for (Index c = 0; c < f.cols(); ++c)
          next[r * f.cols() + c] = row[r] * (long double)f(jf, c);
      row.swap(next);
    }
    long double ref = 0, scale = 0;
    for (Index k = 0; k < K; ++k) {
      ref += row[k] * (long double)column[k];
      scale += std::abs(row[k] * (long double)column[k]);
    }
    worst = std::max(worst, double(std::abs((long double)got - ref) / std::max(scale, 1e-300L)));
  }
  return worst;
}

struct Row {
  Case c;
  std::string dtype, layout;
  double t_auto, t_fused, t_sliced, t_shuffle, flops, bytes, roofline, err_auto, err_shuffle;
};

template <class T>
Row run_case(const Case& c, Layout layout, double bandwidth, double peak, const Options& opt,
             Context& ctx) {
  Index K = 1;
  for (Index f = 0; f < c.N; ++f)
    K *= c.P;
  const Index M = c.M;
  std::mt19937 gen(unsigned(c.P * 100 + c.N));
  std::vector<HostMatrix<T>> host_factors;
  std::vector<DeviceMatrix<T>> dev_factors;
  std::vector<KronFactorRef<T>> refs;
  for (Index f = 0; f < c.N; ++f) {
    host_factors.push_back(HostMatrix<T>::Random(c.P, c.P));
    dev_factors.push_back(to_device(host_factors.back(), Layout::ColMajor, ctx));
  }
  for (const auto& d : dev_factors)
    refs.push_back(KronFactorRef<T>::column_major(d.data(), c.P, c.P, Op::NoTrans));
  DeviceMatrix<T> x(K, M, layout, ctx), y(K, M, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  std::size_t ws = 0;
  for (KronAlgorithm a :
       {KronAlgorithm::Auto, KronAlgorithm::Fused, KronAlgorithm::Sliced, KronAlgorithm::Shuffle})
    ws = std::max(ws, kron_matmul_workspace_bytes<T>(refs, M, layout, a));
  Buffer<char> workspace(Index(ws), MemorySpace::Device, ctx);

  Row row{c, std::string(ScalarTraits<T>::name), to_string(layout), 0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto time_with = [&](KronAlgorithm a) {
    try {
      return median_device_seconds(
          ctx,
          [&] {
            kron_matmul<T>(refs, x.view(), y.view(), T(1), T(0), ctx, workspace.data(), ws, a);
          },
          opt.reps, 3);
    } catch (const Error& e) {
      std::printf("# %s failed: %s\n", std::string(to_string(a)).c_str(), e.what());
      return -1.0;
    }
  };
  row.t_shuffle = time_with(KronAlgorithm::Shuffle);
  row.err_shuffle = sampled_error(host_factors, x, y, ctx, gen);
  row.t_sliced = time_with(KronAlgorithm::Sliced);
  row.t_fused = time_with(KronAlgorithm::Fused);
  row.t_auto = time_with(KronAlgorithm::Auto);
  row.err_auto = sampled_error(host_factors, x, y, ctx, gen);
  row.flops = 2.0 * double(M) * double(c.N) * double(K) * double(c.P);
  row.bytes = 2.0 * double(sizeof(T)) * double(K) * double(M);
  row.roofline = std::max(row.bytes / bandwidth, row.flops / peak);
  return row;
}

void write_row(std::ofstream& csv, const Row& r, double bandwidth, double peak) {
  char line[768];
  auto tflops = [&](double t) { return t > 0 ? r.flops / t * 1e-12 : 0.0; };
  std::snprintf(line, sizeof line,
                "%s,%lld,%lld,%lld,%s,%s,%.6e,%.6e,%.6e,%.6e,%.2f,%.2f,%.1f,%.2f,%.6e,%.3f,%.2f,"
                "%.2e,%.2e\n",
                r.c.table.c_str(), (long long)r.c.P, (long long)r.c.N, (long long)r.c.M,
                r.dtype.c_str(), r.layout.c_str(), r.t_auto, r.t_fused, r.t_sliced, r.t_shuffle,
                tflops(r.t_auto), tflops(r.t_shuffle), bandwidth * 1e-9, peak * 1e-12, r.roofline,
                r.t_auto / r.roofline, r.t_shuffle / r.t_auto, r.err_auto, r.err_shuffle);
  csv << line;
  csv.flush();
  std::fputs(line, stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (arg == "--reps")
      opt.reps = std::stoi(next());
    else if (arg == "--csv")
      opt.csv = next();
    else if (arg == "--json")
      opt.json = next();
    else if (arg == "--quick")
      opt.quick = true;
    else if (arg == "--rowmajor")
      opt.rowmajor = true;
  }
  if (!cuda_available()) {
    std::printf("kron_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  const double bandwidth = measure_copy_bandwidth(ctx);
  std::map<std::string, double> peak;
  peak["float32"] = gemm_peak<float>(ctx);
  peak["float64"] = gemm_peak<double>(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s, SGEMM %.1f TFLOP/s, DGEMM %.1f TFLOP/s\n",
              device_name(0), bandwidth * 1e-9, peak["float32"] * 1e-12, peak["float64"] * 1e-12);

  const Index div = opt.quick ? 16 : 1;
  const std::vector<Case> cases = {{"table1", 8, 6, 1024 / div},  {"table1", 16, 5, 1024 / div},
                                   {"table1", 32, 4, 1024 / div}, {"table1", 64, 3, 1024 / div},
                                   {"table3", 8, 8, 16},          {"table3", 16, 6, 16},
                                   {"table3", 32, 5, 16},         {"table3", 64, 4, 16}};

  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " copy_bandwidth_Bps=" << bandwidth
      << " sgemm_flops=" << peak["float32"] << " dgemm_flops=" << peak["float64"]
      << " reps=" << opt.reps << "\n";
  const char* header =
      "table,P,N,M,dtype,layout,t_auto,t_fused,t_sliced,t_shuffle,tflops_auto,tflops_shuffle,"
      "copy_GBps,gemm_tflops,t_roofline,auto_over_roofline,speedup_vs_shuffle,err_auto,"
      "err_shuffle\n";
  csv << header;
  std::fputs(header, stdout);
  std::vector<Row> rows;
  for (const std::string dtype : {"float32", "float64"}) {
    for (const Case& c : cases) {
      Row r = dtype == "float32"
                  ? run_case<float>(c, Layout::ColMajor, bandwidth, peak[dtype], opt, ctx)
                  : run_case<double>(c, Layout::ColMajor, bandwidth, peak[dtype], opt, ctx);
      write_row(csv, r, bandwidth, peak[dtype]);
      rows.push_back(r);
    }
  }
  if (opt.rowmajor) {
    for (std::size_t i = 0; i < 4; ++i)
      write_row(csv,
                run_case<float>(cases[i], Layout::RowMajor, bandwidth, peak["float32"], opt, ctx),
                bandwidth, peak["float32"]);
  }

  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\", \"copy_bandwidth_GBps\": " << bandwidth * 1e-9
       << ", \"sgemm_tflops\": " << peak["float32"] * 1e-12
       << ", \"dgemm_tflops\": " << peak["float64"] * 1e-12;
  for (const std::string dtype : {"float32", "float64"}) {
    std::vector<double> ratio, speedup;
    for (const Row& r : rows) {
      if (r.dtype != dtype || r.t_auto <= 0) continue;
      ratio.push_back(r.t_auto / r.roofline);
      if (r.t_shuffle > 0) speedup.push_back(r.t_shuffle / r.t_auto);
    }
    std::printf("# %s: median time / roofline %.2f, median speedup vs shuffle %.2fx\n",
                dtype.c_str(), median(ratio), median(speedup));
    json << ", \"" << dtype << "_median_time_over_roofline\": " << median(ratio) << ", \"" << dtype
         << "_median_speedup_vs_shuffle\": " << median(speedup);
  }
  for (const Row& r : rows) {
    if (r.dtype == "float32" && r.c.table == "table1" && (r.c.P == 8 || r.c.P == 16))
      json << ", \"float32_speedup_" << r.c.P << "^" << r.c.N
           << "\": " << (r.t_auto > 0 ? r.t_shuffle / r.t_auto : 0);
  }
  json << "}\n";
  return 0;
}
