// bench/ks_bench: KS factors on the GPU over the ICML paper's pattern grid (Figure 7),
// against the bmm (permute + batched GEMM + permute) and dense cuBLAS baselines, with the
// memory-traffic and arithmetic bounds measured in the same run.
//
//   ks_bench [--stride S] [--batch B] [--reps R] [--csv FILE] [--json FILE] [--quick]
//            [--layout row|col] [--chains [--chain-csv FILE]]
//
// --chains measures square-dyadic butterfly chains instead (n = 256 ... 16384, B = 4096,
// float and complex<float>): the fused multi-factor kernel (what Auto runs) against the
// best factor-by-factor path and against a copy of the same data, and writes
// chain_fusion_speedup_<n> (float, the smaller of the two layouts) to the JSON.
//
// Every row: pattern, dtype, layout, B, the median time of each algorithm (our Auto
// choice, fused kernel, strided GEMM, bmm, dense), the roofline time max(bytes / copy
// bandwidth, flops / GEMM peak), and the max relative error vs the CPU on a 64-signal
// sample. Only fp32/fp64 are benchmarked so far (half/bf16 are not implemented yet).
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "strop/strop.hpp"

using namespace strop;

namespace {

struct Options {
  int stride = 6;
  Index batch = 25088;
  int reps = 20;
  bool quick = false;
  std::string csv = "ks-bench.csv";
  std::string json = "ks-summary.json";
  std::vector<Layout> layouts = {Layout::RowMajor, Layout::ColMajor};
  bool chains = false;
  std::string chain_csv = "ks-chain-bench.csv";
};

// Figure 7 of the ICML paper: (a, b, c, d) with b = c, b = 4c or c = 4b.
std::vector<KSPattern> paper_grid(Index batch) {
  const std::vector<Index> a_list = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  const std::vector<Index> bc_list = {48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  const std::vector<Index> d_list1 = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  const std::vector<Index> d_list2 = {4, 16, 64};
  const Index limit = 2147483647;
  std::vector<KSPattern> grid;
  auto add = [&](Index a, Index b, Index c, Index d) {
    if (batch * a * c * d <= limit && batch * a * b * d <= limit && a * b * c * d <= limit)
      grid.push_back({a, b, c, d});
  };
  auto shape_ok = [](Index b, Index c) { return b == c || b == 4 * c || c == 4 * b; };
  for (Index b : bc_list)
    for (Index c : bc_list)
      for (Index d : d_list1)
        if (shape_ok(b, c)) add(1, b, c, d);
  const std::vector<std::pair<Index, Index>> skip = {{1024, 256}, {256, 1024}, {128, 512},
                                                     {512, 128},  {64, 256},   {256, 64}};
  for (Index a : a_list)
    for (Index b : bc_list)
      for (Index c : bc_list)
        for (Index d : d_list2)
          if (a != 1 && shape_ok(b, c) &&
              std::find(skip.begin(), skip.end(), std::make_pair(b, c)) == skip.end())
            add(a, b, c, d);
  return grid;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Ceilings {
  double bandwidth;                    // bytes/s, read + write
  std::map<std::string, double> peak;  // flop/s per dtype
};

template <class T>
double gemm_peak(Context& ctx) {
  const Index n = 8192;
  DeviceMatrix<T> a(n, n), x(n, n), y(n, n);
  fill_random_device(a.view(), 1, ctx);
  fill_random_device(x.view(), 2, ctx);
  const Dense<T> A(HostMatrix<T>::Random(n, n));
  const double t = median_device_seconds(
      ctx, [&] { apply(A, x.view(), y.view()); }, 5, 2);
  return A.flops(n) / t;
}

// Relative error of the device application of K (a factor or a chain) against the CPU on a
// 64-signal sample.
template <class T, class Operator>
double sample_error(const Operator& K, Layout layout, Context& ctx) {
  const HostMatrix<T> x = HostMatrix<T>::Random(K.cols(), 64);
  HostMatrix<T> expected(K.rows(), 64);
  apply(K, view(x), view(expected));
  const DeviceMatrix<T> xd = to_device(x, layout, ctx);
  DeviceMatrix<T> yd(K.rows(), 64, layout, ctx);
  apply(K, xd.view(), yd.view(), T(1), T(0), ctx);
  return double((yd.to_host(ctx) - expected).norm() / expected.norm());
}

// Median time of Y = K X with `algorithm` forced (3 warm-up runs); -1 where that algorithm
// does not apply (layout, size).
template <class Operator, class T>
double time_forced(const Operator& K, KSAlgorithm algorithm, DeviceMatrix<T>& x, DeviceMatrix<T>& y,
                   int reps, Context& ctx) {
  KSAlgorithmGuard guard(algorithm);
  try {
    return median_device_seconds(
        ctx, [&] { apply(K, x.view(), y.view(), T(1), T(0), ctx); }, reps, 3);
  } catch (const DeviceError&) {
    return -1.0;
  }
}

struct Row {
  KSPattern p;
  std::string dtype, layout;
  Index batch;
  double t_auto, t_fused, t_strided, t_bmm, t_dense, roofline, error;
  std::string chosen;
  double t_small = -1;  // the small-batch kernel, measured up to 64 signals
};

template <class T>
Row run_case(const KSPattern& p, Layout layout, Index batch, const Ceilings& ceil,
             const Options& opt, Context& ctx) {
  std::mt19937 gen(p.a * 131 + p.b * 17 + p.c * 7 + p.d);
  const KSFactor<T> K = KSFactor<T>::random(p, gen);
  DeviceMatrix<T> x(K.cols(), batch, layout, ctx), y(K.rows(), batch, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  auto time_with = [&](KSAlgorithm algorithm) {
    return time_forced(K, algorithm, x, y, opt.reps, ctx);
  };
  Row row{p, std::string(ScalarTraits<T>::name), to_string(layout), batch, 0, 0, 0, 0, 0, 0, 0, ""};
  row.t_fused = time_with(KSAlgorithm::Fused);
  const bool strided_ok =
      ks_strided_gemm_supported(p, Op::NoTrans, ConstView<T>(x.view()), ConstView<T>(y.view()));
  row.t_strided = strided_ok ? time_with(KSAlgorithm::StridedGemm) : -1;
  row.t_bmm = time_with(KSAlgorithm::Bmm);
  // Dense only where the matrix is at most 16k x 16k.
  row.t_dense = K.rows() * K.cols() <= (Index(1) << 28) ? time_with(KSAlgorithm::Dense) : -1;
  const KSAlgorithm chosen =
      ks_auto_algorithm(p, Op::NoTrans, ConstView<T>(x.view()), ConstView<T>(y.view()));
  row.chosen = std::string(to_string(chosen));
  if (batch <= 64) row.t_small = time_with(KSAlgorithm::SmallBatch);
  row.t_auto = chosen == KSAlgorithm::StridedGemm  ? row.t_strided
               : chosen == KSAlgorithm::SmallBatch ? row.t_small
                                                   : row.t_fused;
  const double bytes = double(sizeof(T)) * double(batch * (K.rows() + K.cols()) + K.nnz());
  row.roofline = std::max(bytes / ceil.bandwidth, K.flops(batch) / ceil.peak.at(row.dtype));
  row.error = sample_error<T>(K, layout, ctx);
  return row;
}

void write_row(std::ofstream& csv, const Row& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%lld,%lld,%lld,%lld,%s,%s,%lld,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.3e,%.6e\n",
                (long long)r.p.a, (long long)r.p.b, (long long)r.p.c, (long long)r.p.d,
                r.dtype.c_str(), r.layout.c_str(), (long long)r.batch, r.chosen.c_str(), r.t_auto,
                r.t_fused, r.t_strided, r.t_bmm, r.t_dense, r.roofline, r.error, r.t_small);
  csv << line;
  std::fputs(line, stdout);
}

double best_baseline(const Row& r) {
  double best = r.t_bmm;
  if (r.t_dense > 0 && (best < 0 || r.t_dense < best)) best = r.t_dense;
  return best;
}

// One butterfly chain: the fused chain kernel (Auto) against the factors one by one with
// the best single-factor algorithm, and against copying X to Y.
struct ChainRow {
  Index n, batch, factors;
  std::string dtype, layout, best_per_factor;
  double t_chain, t_per_factor, t_copy, error;
};

template <class T>
ChainRow run_chain(Index n, Layout layout, Index batch, const Ceilings& ceil, const Options& opt,
                   Context& ctx) {
  std::mt19937 gen(static_cast<unsigned>(n));
  const auto K = KSChain<T>::random(butterfly_patterns(n), gen);
  DeviceMatrix<T> x(n, batch, layout, ctx), y(n, batch, layout, ctx);
  fill_random_device(x.view(), 7, ctx);
  auto time_with = [&](KSAlgorithm algorithm) {
    return time_forced(K, algorithm, x, y, opt.reps, ctx);
  };
  ChainRow row{
      n, batch, Index(K.size()), std::string(ScalarTraits<T>::name), to_string(layout), "", 0, -1,
      0, 0};
  row.t_chain = time_with(KSAlgorithm::Auto);
  for (KSAlgorithm a : {KSAlgorithm::Fused, KSAlgorithm::StridedGemm, KSAlgorithm::Bmm}) {
    const double t = time_with(a);
    if (t > 0 && (row.t_per_factor < 0 || t < row.t_per_factor)) {
      row.t_per_factor = t;
      row.best_per_factor = std::string(to_string(a));
    }
  }
  row.t_copy = 2.0 * double(sizeof(T)) * double(n) * double(batch) / ceil.bandwidth;
  row.error = sample_error<T>(K, layout, ctx);  // through the same (Auto) path
  return row;
}

void write_chain_row(std::ofstream& csv, const ChainRow& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%lld,%lld,%s,%s,%lld,%.6e,%.6e,%s,%.6e,%.3f,%.3f,%.3e\n",
                (long long)r.n, (long long)r.factors, r.dtype.c_str(), r.layout.c_str(),
                (long long)r.batch, r.t_chain, r.t_per_factor, r.best_per_factor.c_str(), r.t_copy,
                r.t_per_factor / r.t_chain, r.t_chain / r.t_copy, r.error);
  csv << line;
  std::fputs(line, stdout);
}

void run_chains(const Options& opt, const Ceilings& ceil, Context& ctx) {
  std::ofstream csv(opt.chain_csv);
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << ceil.bandwidth << "\n";
  csv << "n,factors,dtype,layout,batch,t_fused_chain,t_per_factor,best_per_factor,t_copy,"
         "speedup,chain_over_copy,rel_error\n";
  std::map<Index, double> speedup;  // float, the smaller over the layouts
  for (Index n : {256, 1024, 4096, 16384}) {
    for (Layout layout : opt.layouts) {
      const ChainRow f = run_chain<float>(n, layout, 4096, ceil, opt, ctx);
      write_chain_row(csv, f);
      const double s = f.t_per_factor / f.t_chain;
      speedup[n] = speedup.count(n) ? std::min(speedup[n], s) : s;
      write_chain_row(csv, run_chain<std::complex<float>>(n, layout, 4096, ceil, opt, ctx));
    }
  }
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\"";
  for (const auto& [n, s] : speedup)
    json << ", \"chain_fusion_speedup_" << n << "\": " << s;
  json << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (arg == "--stride")
      opt.stride = std::stoi(next());
    else if (arg == "--batch")
      opt.batch = std::stoll(next());
    else if (arg == "--reps")
      opt.reps = std::stoi(next());
    else if (arg == "--csv")
      opt.csv = next();
    else if (arg == "--json")
      opt.json = next();
    else if (arg == "--quick")
      opt.quick = true;
    else if (arg == "--chains")
      opt.chains = true;
    else if (arg == "--chain-csv")
      opt.chain_csv = next();
    else if (arg == "--layout") {
      const std::string l = next();
      opt.layouts = {l == "col" ? Layout::ColMajor : Layout::RowMajor};
    }
  }
  if (!cuda_available()) {
    std::printf("ks_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  Ceilings ceil;
  ceil.bandwidth = measure_copy_bandwidth(ctx);
  ceil.peak["float32"] = gemm_peak<float>(ctx);
  ceil.peak["float64"] = gemm_peak<double>(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s, fp32 GEMM %.1f TFLOP/s, fp64 %.1f TFLOP/s\n",
              device_name(0), ceil.bandwidth * 1e-9, ceil.peak["float32"] * 1e-12,
              ceil.peak["float64"] * 1e-12);

  if (opt.chains) {
    run_chains(opt, ceil, ctx);
    return 0;
  }
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << ceil.bandwidth
      << " fp32_peak=" << ceil.peak["float32"] << "\n";
  csv << "a,b,c,d,dtype,layout,batch,auto_choice,t_auto,t_fused,t_strided_gemm,t_bmm,t_dense,"
         "t_roofline,rel_error,t_small_batch\n";
  const auto grid = paper_grid(opt.batch);
  std::vector<Row> grid_rows;
  for (std::size_t g = 0; g < grid.size(); g += opt.quick ? 40 : opt.stride) {
    for (Layout layout : opt.layouts) {
      Row r = run_case<float>(grid[g], layout, opt.batch, ceil, opt, ctx);
      write_row(csv, r);
      grid_rows.push_back(r);
    }
  }
  // Batch-size sweep on a few patterns (butterfly-like small blocks and paper-like ones).
  const std::vector<KSPattern> sweep = {
      {1, 64, 64, 16}, {4, 128, 128, 4}, {1, 256, 64, 8}, {64, 2, 2, 64}, {1, 4, 4, 256}};
  for (const KSPattern& p : sweep)
    for (Index b : {1, 16, 128, 1024, 4096, 25088, 65536})
      for (Layout layout : opt.layouts)
        write_row(csv, run_case<float>(p, layout, b, ceil, opt, ctx));

  // Summary over the grid rows, per layout.
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\"";
  for (const std::string layout : {"RowMajor", "ColMajor"}) {
    std::vector<double> speedups, over_roofline;
    int wins = 0, total = 0;
    for (const Row& r : grid_rows) {
      if (r.layout != layout || r.t_auto <= 0 || best_baseline(r) <= 0) continue;
      ++total;
      const double s = best_baseline(r) / r.t_auto;
      wins += s > 1.0;
      speedups.push_back(s);
      over_roofline.push_back(r.t_auto / r.roofline);
    }
    const double win_rate = total ? double(wins) / total : 0;
    std::printf(
        "# fp32 %s: %d cases, ours beats min(bmm, dense) in %.1f%%, median speedup %.2fx, "
        "median time / roofline %.2f\n",
        layout.c_str(), total, 100 * win_rate, median(speedups), median(over_roofline));
    const std::string key = layout == "RowMajor" ? "fp32_bsl" : "fp32_bsf";
    json << ", \"" << key << "_win_rate\": " << win_rate << ", \"" << key
         << "_median_speedup\": " << median(speedups) << ", \"" << key
         << "_median_time_over_roofline\": " << median(over_roofline);
  }
  json << "}\n";
  return 0;
}
