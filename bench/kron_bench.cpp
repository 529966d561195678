// bench/kron_bench: Kron-matmul on the GPU on FastKron's shapes (PPoPP 2024, Table 1:
// M = 1024 signals, 8^6, 16^5, 32^4, 64^3; Table 3: M = 16, 8^8, 16^6, 32^5, 64^4; Table 4:
// real-world shapes), float and double, against our shuffle baseline (reshape + cuBLAS GEMM
// + transpose per factor), and the 16-bit path (half, bfloat16) against our float path,
// with the copy bandwidth and the GEMM rates measured in the same run.
//
//   kron_bench [--reps R] [--csv FILE] [--json FILE] [--quick] [--rowmajor] [--no-table4]
//              [--only SHAPE[,SHAPE...] or a table name] [--auto-only]
//
// Every row: table, shape, M, dtype, layout, the median time (CUDA events, R runs after 3
// warm-ups) of Auto (ours), Fused (fuse every small factor), Sliced (our one-factor kernel),
// Gemm (one strided-batched cuBLAS GEMM per factor) and Shuffle; for half/bf16 rows t_auto
// is the 16-bit path's Auto (GEMMs, merged runs, tensor-core pair passes) and t_gemm its
// one-GEMM-per-factor plan, the other columns empty. Then TFLOP/s with FastKron's count
// 2*M*sum_f K_f*Q_f, the roofline time max((read X + write Y) / copy bandwidth, flops /
// GEMM rate of the dtype), and the largest error of ours and of the shuffle on sampled
// outputs against a CPU dot product in long double (relative to sum |a_jk x_k|, so
// cancellation cannot inflate it). --quick divides M by 16. --auto-only times Auto alone (the
// other columns empty; for probes).
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "bench_support.hpp"
#include "strop/strop.hpp"

#if STROP_BENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

using namespace strop;

namespace {

struct Options {
  int reps = 20;
  bool quick = false;
  bool rowmajor = false;
  bool table4 = true;
  std::string only;  // these shapes ("16^5,8^6") or tables ("table1", "table4") only
  bool auto_only = false;
  std::string csv = "kron-bench.csv";
  std::string json = "kron-summary.json";
};

struct Case {
  std::string table;
  std::string name;                             // "8^6", or the factor list of Table 4
  std::vector<std::pair<Index, Index>> shapes;  // (P, Q) of each factor, first factor first
  Index M;
};

Case power_case(const std::string& table, Index P, int N, Index M) {
  return {table, std::to_string(P) + "^" + std::to_string(N),
          std::vector<std::pair<Index, Index>>(std::size_t(N), {P, P}), M};
}

template <class T>
double gemm_peak(Context& ctx) {
  const Index n = 8192;
  DeviceMatrix<T> x(n, n), y(n, n);
  fill_random_device(x.view(), 2, ctx);
  const Dense<T> A(HostMatrix<T>::Random(n, n));
  const double t = median_device_seconds(
      ctx, [&] { apply(A, x.view(), y.view()); }, 5, 2);
  return A.flops(n) / t;
}

// Tensor-core GEMM rate with 16-bit operands and fp32 accumulation (cublasGemmEx).
double half_gemm_peak(Context& ctx) {
#if STROP_BENCH_HAVE_CUBLAS
  const int n = 8192;
  DeviceMatrix<strop::half> a(n, n), x(n, n), y(n, n);
  fill_random_device(a.view(), 1, ctx);
  fill_random_device(x.view(), 2, ctx);
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  const float one = 1, zero = 0;
  const double t = median_device_seconds(
      ctx,
      [&] {
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), CUDA_R_16F, n,
                     x.data(), CUDA_R_16F, n, &zero, y.data(), CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
      },
      5, 2);
  return 2.0 * double(n) * n * n / t;
#else
  (void)ctx;
  return 0;
#endif
}

template <class S>
long double as_ld(S v) {
  if constexpr (is_reduced_precision_v<S>)
    return (long double)float(v);
  else
    return (long double)v;
}

// Largest error over sampled outputs y[j, b] of the current Y (factors in float or double).
template <class F, class S>
double sampled_error(const std::vector<HostMatrix<F>>& factors, const DeviceMatrix<S>& x,
                     const DeviceMatrix<S>& y, Context& ctx, std::mt19937& gen) {
  const Index K = x.rows(), M = x.cols(), J = y.rows();
  double worst = 0;
  std::vector<S> column(K), all;
  S got{};
  for (int sample = 0; sample < 3; ++sample) {
    const Index b = std::uniform_int_distribution<Index>(0, M - 1)(gen);
    const Index j = std::uniform_int_distribution<Index>(0, J - 1)(gen);
    // Column b of X (contiguous in ColMajor; strided in RowMajor: copy the whole X once).
    if (x.layout() == Layout::ColMajor) {
      detail::copy_bytes(column.data(), MemorySpace::Host, x.data() + b * K, MemorySpace::Device,
                         sizeof(S) * K, ctx);
    } else {
      if (all.empty()) {
        all.resize(K * M);
        detail::copy_bytes(all.data(), MemorySpace::Host, x.data(), MemorySpace::Device,
                           sizeof(S) * K * M, ctx);
      }
      for (Index k = 0; k < K; ++k)
        column[k] = all[k * M + b];
    }
    const Index y_index = y.layout() == Layout::ColMajor ? j + b * J : j * M + b;
    detail::copy_bytes(&got, MemorySpace::Host, y.data() + y_index, MemorySpace::Device, sizeof(S),
                       ctx);
    // Row j of F_1 ⊗ ... ⊗ F_n (each Q x P), built digit by digit (first factor most
    // significant).
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
      ref += row[k] * as_ld(column[k]);
      scale += std::abs(row[k] * as_ld(column[k]));
    }
    worst = std::max(worst, double(std::abs(as_ld(got) - ref) / std::max(scale, 1e-300L)));
  }
  return worst;
}

struct Row {
  Case c;
  std::string dtype, layout;
  double t_auto = -1, t_fused = -1, t_sliced = -1, t_gemm = -1, t_shuffle = -1;
  double flops = 0, bytes = 0, roofline = 0, err_auto = 0, err_shuffle = 0;
};

struct Problem {
  Index K = 1, J = 1;
  double flops = 0;
};

Problem problem_of(const Case& c) {
  Problem p;
  for (auto [P, Q] : c.shapes) {
    p.K *= P;
    p.J *= Q;
  }
  // FastKron's count: factor f (applied last first) multiplies M x K_f by P x Q.
  Index K = p.K;
  for (auto it = c.shapes.rbegin(); it != c.shapes.rend(); ++it) {
    p.flops += 2.0 * double(c.M) * double(K) * double(it->second);
    K = K / it->first * it->second;
  }
  return p;
}

// Factors G_f (Q x P) in F precision, on the host and on the device (column-major).
template <class F>
struct Factors {
  std::vector<HostMatrix<F>> host;
  std::vector<DeviceMatrix<F>> device;
  std::vector<KronFactorRef<F>> refs;
  Factors(const Case& c, Context& ctx) {
    for (auto [P, Q] : c.shapes) {
      host.push_back(HostMatrix<F>::Random(Q, P));
      device.push_back(to_device(host.back(), Layout::ColMajor, ctx));
    }
    for (std::size_t f = 0; f < host.size(); ++f)
      refs.push_back(KronFactorRef<F>::column_major(device[f].data(), host[f].rows(),
                                                    host[f].cols(), Op::NoTrans));
  }
};

template <class T>
Row run_case(const Case& c, Layout layout, double bandwidth, double peak, const Options& opt,
             Context& ctx) {
  const Problem p = problem_of(c);
  std::mt19937 gen(unsigned(p.K + c.M));
  const Factors<T> g(c, ctx);
  DeviceMatrix<T> x(p.K, c.M, layout, ctx), y(p.J, c.M, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  const KronAlgorithm all[] = {KronAlgorithm::Auto, KronAlgorithm::Fused, KronAlgorithm::Sliced,
                               KronAlgorithm::Gemm, KronAlgorithm::Shuffle};
  std::size_t ws = 0;
  for (KronAlgorithm a : all)
    ws = std::max(ws, kron_matmul_workspace_bytes<T>(g.refs, c.M, layout, a));
  Buffer<char> workspace(Index(ws), MemorySpace::Device, ctx);

  Row row{c, std::string(ScalarTraits<T>::name), std::string(to_string(layout))};
  auto time_with = [&](KronAlgorithm a) {
    try {
      return median_device_seconds(
          ctx,
          [&] {
            kron_matmul<T>(g.refs, x.view(), y.view(), T(1), T(0), ctx, workspace.data(), ws, a);
          },
          opt.reps, 3);
    } catch (const Error& e) {
      std::printf("# %s failed: %s\n", std::string(to_string(a)).c_str(), e.what());
      return -1.0;
    }
  };
  if (!opt.auto_only) {
    row.t_shuffle = time_with(KronAlgorithm::Shuffle);
    row.err_shuffle = sampled_error(g.host, x, y, ctx, gen);
    row.t_sliced = time_with(KronAlgorithm::Sliced);
    row.t_fused = time_with(KronAlgorithm::Fused);
    row.t_gemm = time_with(KronAlgorithm::Gemm);
  }
  row.t_auto = time_with(KronAlgorithm::Auto);
  row.err_auto = sampled_error(g.host, x, y, ctx, gen);
  row.flops = p.flops;
  row.bytes = double(sizeof(T)) * double(p.K + p.J) * double(c.M);
  row.roofline = std::max(row.bytes / bandwidth, row.flops / peak);
  return row;
}

// The 16-bit path (float factors rounded to Storage, tensor cores): Auto and one GEMM per factor.
template <class Storage>
Row run_reduced(const Case& c, Layout layout, double bandwidth, double peak, const Options& opt,
                Context& ctx) {
  const Problem p = problem_of(c);
  std::mt19937 gen(unsigned(p.K + c.M + 1));
  const Factors<float> g(c, ctx);
  DeviceMatrix<Storage> x(p.K, c.M, layout, ctx), y(p.J, c.M, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  const std::size_t ws =
      std::max(kron_matmul_workspace_bytes<Storage>(g.refs, c.M, layout),
               kron_matmul_workspace_bytes<Storage>(g.refs, c.M, layout, KronAlgorithm::Gemm));
  Buffer<char> workspace(Index(ws), MemorySpace::Device, ctx);
  Row row{c, std::is_same_v<Storage, strop::half> ? "float16" : "bfloat16",
          std::string(to_string(layout))};
  row.t_auto = median_device_seconds(
      ctx,
      [&] {
        kron_matmul<Storage>(g.refs, x.view(), y.view(), 1.0f, 0.0f, ctx, workspace.data(), ws);
      },
      opt.reps, 3);
  row.err_auto = sampled_error(g.host, x, y, ctx, gen);
  if (!opt.auto_only)
    row.t_gemm = median_device_seconds(
        ctx,
        [&] {
          kron_matmul<Storage>(g.refs, x.view(), y.view(), 1.0f, 0.0f, ctx, workspace.data(), ws,
                               KronAlgorithm::Gemm);
        },
        opt.reps, 3);
  row.flops = p.flops;
  row.bytes = 2.0 * double(p.K + p.J) * double(c.M);
  row.roofline = std::max(row.bytes / bandwidth, peak > 0 ? row.flops / peak : 0.0);
  return row;
}

std::string field(double t) {
  if (t <= 0) return "";
  char s[32];
  std::snprintf(s, sizeof s, "%.6e", t);
  return s;
}

void write_row(std::ofstream& csv, const Row& r, double bandwidth, double peak) {
  char line[1024];
  auto tflops = [&](double t) { return t > 0 ? r.flops / t * 1e-12 : 0.0; };
  std::snprintf(line, sizeof line,
                "%s,%s,%lld,%s,%s,%s,%s,%s,%s,%s,%.2f,%.2f,%.1f,%.2f,%.6e,%.3f,%.2f,%.2e,%.2e\n",
                r.c.table.c_str(), r.c.name.c_str(), (long long)r.c.M, r.dtype.c_str(),
                r.layout.c_str(), field(r.t_auto).c_str(), field(r.t_fused).c_str(),
                field(r.t_sliced).c_str(), field(r.t_gemm).c_str(), field(r.t_shuffle).c_str(),
                tflops(r.t_auto), tflops(r.t_shuffle), bandwidth * 1e-9, peak * 1e-12, r.roofline,
                r.t_auto / r.roofline, r.t_shuffle > 0 ? r.t_shuffle / r.t_auto : 0.0, r.err_auto,
                r.err_shuffle);
  csv << line;
  csv.flush();
  std::fputs(line, stdout);
  std::fflush(stdout);
}

// Table 4 of the paper (real-world shapes) that fit in memory here; 32^6 (M = 16, 68 GB in
// float) is left out.
std::vector<Case> table4() {
  using S = std::vector<std::pair<Index, Index>>;
  auto rep = [](Index p, int n) { return S(std::size_t(n), {p, p}); };
  auto cat = [](S a, const S& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  return {{"table4", "2^7", rep(2, 7), 20},
          {"table4", "2^9", rep(2, 9), 50},
          {"table4", "2^10", rep(2, 10), 20},
          {"table4", "2^11", rep(2, 11), 1},
          {"table4", "52x50*65x20", S{{52, 50}, {65, 20}}, 10},
          {"table4", "32x8*64x128", S{{32, 8}, {64, 128}}, 50},
          {"table4", "52x65*50x20", S{{52, 65}, {50, 20}}, 10},
          {"table4", "2^9", rep(2, 9), 16},
          {"table4", "8^3", rep(8, 3), 16},
          {"table4", "3^7", rep(3, 7), 1024},
          {"table4", "4^7", rep(4, 7), 1024},
          {"table4", "6^7", rep(6, 7), 1024},
          {"table4", "5^3*2", cat(rep(5, 3), S{{2, 2}}), 1},
          {"table4", "5^2*2*25", cat(rep(5, 2), S{{2, 2}, {25, 25}}), 1},
          {"table4", "4^6", rep(4, 6), 1526},
          {"table4", "8^3", rep(8, 3), 156},
          {"table4", "4^7", rep(4, 7), 2967},
          {"table4", "64^3", rep(64, 3), 16}};
}

std::string json_map(const std::map<std::string, double>& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) {
    if (s.size() > 1) s += ", ";
    char num[64];
    std::snprintf(num, sizeof num, "%.4g", v);
    s += "\"" + k + "\": " + num;
  }
  return s + "}";
}

// Whether `only` (empty: everything; else a comma list of shape or table names) names c.
bool selected(const std::string& only, const Case& c) {
  if (only.empty()) return true;
  for (const std::string& name : bench::split_list(only))
    if (name == c.name || name == c.table) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (bench::read_common_flag(arg, next, opt)) continue;
    if (arg == "--quick")
      opt.quick = true;
    else if (arg == "--rowmajor")
      opt.rowmajor = true;
    else if (arg == "--no-table4")
      opt.table4 = false;
    else if (arg == "--only")
      opt.only = next();
    else if (arg == "--auto-only")
      opt.auto_only = true;
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
  peak["float16"] = peak["bfloat16"] = half_gemm_peak(ctx);
  std::printf(
      "# device %s, copy bandwidth %.0f GB/s, SGEMM %.1f, DGEMM %.1f, HGEMM (fp32 acc.) %.1f "
      "TFLOP/s\n",
      device_name(0), bandwidth * 1e-9, peak["float32"] * 1e-12, peak["float64"] * 1e-12,
      peak["float16"] * 1e-12);

  const Index div = opt.quick ? 16 : 1;
  const std::vector<Case> cases = {
      power_case("table1", 8, 6, 1024 / div),  power_case("table1", 16, 5, 1024 / div),
      power_case("table1", 32, 4, 1024 / div), power_case("table1", 64, 3, 1024 / div),
      power_case("table3", 8, 8, 16),          power_case("table3", 16, 6, 16),
      power_case("table3", 32, 5, 16),         power_case("table3", 64, 4, 16)};

  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " copy_bandwidth_Bps=" << bandwidth
      << " sgemm_flops=" << peak["float32"] << " dgemm_flops=" << peak["float64"]
      << " hgemm_flops=" << peak["float16"] << " reps=" << opt.reps << "\n";
  const char* header =
      "table,shape,M,dtype,layout,t_auto,t_fused,t_sliced,t_gemm,t_shuffle,tflops_auto,"
      "tflops_shuffle,copy_GBps,gemm_tflops,t_roofline,auto_over_roofline,speedup_vs_shuffle,"
      "err_auto,err_shuffle\n";
  csv << header;
  std::fputs(header, stdout);
  std::vector<Row> rows;
  auto record = [&](const Row& r) {
    write_row(csv, r, bandwidth, peak[r.dtype]);
    rows.push_back(r);
  };
  for (const Case& c : cases) {
    if (!selected(opt.only, c)) continue;
    record(run_case<float>(c, Layout::ColMajor, bandwidth, peak["float32"], opt, ctx));
    record(run_case<double>(c, Layout::ColMajor, bandwidth, peak["float64"], opt, ctx));
    record(run_reduced<strop::half>(c, Layout::ColMajor, bandwidth, peak["float16"], opt, ctx));
    record(run_reduced<bfloat16>(c, Layout::ColMajor, bandwidth, peak["float16"], opt, ctx));
  }
  if (opt.rowmajor) {
    for (std::size_t i = 0; i < 4; ++i) {
      record(run_case<float>(cases[i], Layout::RowMajor, bandwidth, peak["float32"], opt, ctx));
      record(run_reduced<strop::half>(cases[i], Layout::RowMajor, bandwidth, peak["float16"], opt,
                                      ctx));
    }
  }
  if (opt.table4)
    for (const Case& c : table4())
      if (selected(opt.only, c))
        record(run_case<float>(c, Layout::ColMajor, bandwidth, peak["float32"], opt, ctx));

  // The summary of issue #8, over Tables 1 and 3 (batch-first).
  auto find = [&](const std::string& name, Index M, const std::string& dtype) -> const Row* {
    for (const Row& r : rows)
      if (r.c.table != "table4" && r.c.name == name && r.c.M == M && r.dtype == dtype &&
          r.layout == "ColMajor")
        return &r;
    return nullptr;
  };
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\", \"copy_bandwidth_GBps\": " << bandwidth * 1e-9
       << ", \"sgemm_tflops\": " << peak["float32"] * 1e-12
       << ", \"dgemm_tflops\": " << peak["float64"] * 1e-12
       << ", \"hgemm_tflops\": " << peak["float16"] * 1e-12;
  for (const std::string dtype : {"float32", "float64"}) {
    std::vector<double> frac, speedup;
    for (const Case& c : cases)
      if (const Row* r = find(c.name, c.M, dtype); r && r->t_auto > 0) {
        frac.push_back(r->roofline / r->t_auto);
        if (r->t_shuffle > 0) speedup.push_back(r->t_shuffle / r->t_auto);
      }
    std::printf(
        "# %s: median fraction of the roofline %.3f (time / roofline %.2fx), median "
        "speedup vs shuffle %.2fx\n",
        dtype.c_str(), bench::median_of(frac), 1 / bench::median_of(frac),
        bench::median_of(speedup));
    const std::string key = dtype == "float32" ? "float" : "double";
    json << ", \"" << key << "_median_frac_roofline\": " << bench::median_of(frac) << ", \"" << key
         << "_median_speedup_vs_shuffle\": " << bench::median_of(speedup);
  }
  std::map<std::string, double> vs_shuffle, half_over_float, bf16_over_float;
  for (const Case& c : cases) {
    const Row* f = find(c.name, c.M, "float32");
    if (!f || f->t_auto <= 0) continue;
    if (c.table == "table1" && (c.name == "8^6" || c.name == "16^5") && f->t_shuffle > 0)
      vs_shuffle[c.name] = f->t_shuffle / f->t_auto;
    if (c.table != "table1") continue;
    if (const Row* h = find(c.name, c.M, "float16"))
      half_over_float[c.name] = f->t_auto / h->t_auto;
    if (const Row* b = find(c.name, c.M, "bfloat16"))
      bf16_over_float[c.name] = f->t_auto / b->t_auto;
  }
  json << ", \"float_speedup_vs_shuffle\": " << json_map(vs_shuffle)
       << ", \"half_over_float\": " << json_map(half_over_float)
       << ", \"bfloat16_over_float\": " << json_map(bf16_over_float) << "}\n";
  std::printf("# float speedup vs shuffle %s\n# half over float %s\n# bf16 over float %s\n",
              json_map(vs_shuffle).c_str(), json_map(half_over_float).c_str(),
              json_map(bf16_over_float).c_str());
  return 0;
}
