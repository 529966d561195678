// bench/ks_bench: KS factors on the GPU over the ICML paper's pattern grid (Figure 7),
// against the bmm (permute + batched GEMM + permute) and dense cuBLAS baselines, with the
// memory-traffic and arithmetic bounds measured in the same run.
//
//   ks_bench [--stride S] [--batch B] [--reps R] [--csv FILE] [--json FILE] [--quick]
//            [--layout row|col] [--dtypes float32,float16,bfloat16] [--chains [--chain-csv FILE]]
//            [--no-sweep] [--tuned] [--tile-csv FILE] [--only a,b,c,d] [--offset O]
//            [--d LIST]
//
// --chains measures square-dyadic butterfly chains instead (n = 256 ... 16384, B = 4096,
// float, half and complex<float>): the fused multi-factor kernel (what Auto runs) against the
// best factor-by-factor path and against a copy of the same data, and writes
// chain_fusion_speedup_<n> (float) and chain_fusion_speedup_fp16_<n> (half), each the
// smaller of the two layouts, to the JSON.
//
// Every row: pattern, dtype, layout, B, the median time of each algorithm (our Auto
// choice, fused kernel, strided GEMM, bmm, dense), the roofline time max(bytes / copy
// bandwidth, flops / GEMM peak), and the relative error vs the CPU on a 64-signal sample, of
// Auto and of the dense cuBLAS path. --dtypes picks the signal types (default all three):
// float16 and bfloat16 rows apply the same float factor to 16-bit signals
// (apply_reduced_precision: weights rounded to 16 bits, fp32 accumulation on tensor cores),
// with the 16-bit tensor-core GEMM rate (cublasGemmEx) as their arithmetic ceiling and no
// small-batch column (that kernel has no 16-bit version).
// --tuned adds Auto with tuning on (t_tuned, and what tuning chose: algorithm[:tile]) and
// <prefix>_tuned_* summary keys; --tile-csv FILE times the 16-bit tensor-core kernel with each
// tile configuration that tuning measures; --no-sweep skips the batch-size sweep.
// The grid is walked from pattern O (--offset, default 0) in steps of S (--stride), over the
// patterns whose d is in LIST (--d 2,6; default all): --stride 2 --offset 0 and --offset 1
// split the whole grid into two runs.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "bench_support.hpp"
#include "operators/ks/ks_mma_tile.hpp"
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
  std::vector<std::string> dtypes = {"float32", "float16", "bfloat16"};
  bool chains = false;
  std::string chain_csv = "ks-chain-bench.csv";
  bool sweep = true;              // --no-sweep: the grid only
  bool tuned = false;             // --tuned: also Auto with tuning on (t_tuned, tuned_choice)
  std::string tile_csv;           // --tile-csv FILE: 16-bit grid rows, the fused kernel per tile
  std::optional<KSPattern> only;  // --only a,b,c,d: this pattern in place of the grid
  int offset = 0;                 // --offset O: the first grid pattern measured
  std::vector<Index> d_list;      // --d LIST: grid patterns with these d only (empty: all)
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

struct Ceilings {
  double bandwidth;                    // bytes/s, read + write
  std::map<std::string, double> peak;  // flop/s per dtype
};

// GEMM rate of the dtype stored as T (8192^3, cuBLAS through strop's dense path): plain
// FP32/FP64 for float/double (TF32 off), tensor cores with fp32 accumulation for 16-bit
// storage (cublasGemmEx).
template <class T>
double gemm_peak(Context& ctx) {
  const Index n = 8192;
  DeviceMatrix<T> a(n, n), x(n, n), y(n, n);
  fill_random_device(a.view(), 1, ctx);
  fill_random_device(x.view(), 2, ctx);
  using A = ComputeScalar<T>;
  const double t = median_device_seconds(
      ctx,
      [&] {
        detail::dense_apply_device<T>(a.data(), a.data(), n, n, Op::NoTrans, ConstView<T>(x.view()),
                                      y.view(), A(1), A(0), ctx);
      },
      5, 2);
  return 2.0 * double(n) * double(n) * double(n) / t;
}

// The name of signals stored as T in the CSV and in Ceilings::peak (ScalarTraits has no
// 16-bit entries).
template <class T>
std::string dtype_name() {
  if constexpr (std::is_same_v<T, strop::half>)
    return "float16";
  else if constexpr (std::is_same_v<T, bfloat16>)
    return "bfloat16";
  else
    return std::string(ScalarTraits<T>::name);
}

// Y = K X on device signals stored as T: 16-bit signals go through the float operator
// (apply_reduced_precision), the others through apply. Both honour the thread's KSAlgorithm.
template <class Operator, class T>
void apply_on_device(const Operator& K, const DeviceMatrix<T>& x, DeviceMatrix<T>& y,
                     Context& ctx) {
  if constexpr (is_reduced_precision_v<T>)
    apply_reduced_precision<T>(K, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f, ctx);
  else
    apply(K, x.view(), y.view(), T(1), T(0), ctx);
}

// Relative (Frobenius) error of the device application of K (a factor or a chain) with
// `algorithm` against the CPU on a 64-signal sample, stored as T. The reference applies K in
// its own precision to the same inputs (for 16-bit T: x rounded to T, then back to float), so
// only the device's arithmetic and output rounding are measured.
template <class T, class Operator>
double sample_error(const Operator& K, Layout layout, Context& ctx,
                    KSAlgorithm algorithm = KSAlgorithm::Auto) {
  using F = ComputeScalar<T>;  // the operator's scalar
  const HostMatrix<T> x = HostMatrix<F>::Random(K.cols(), 64).template cast<T>();
  const HostMatrix<F> x_exact = x.template cast<F>();
  HostMatrix<F> expected(K.rows(), 64);
  apply(K, view(x_exact), view(expected));
  const DeviceMatrix<T> xd = to_device(x, layout, ctx);
  DeviceMatrix<T> yd(K.rows(), 64, layout, ctx);
  KSAlgorithmGuard guard(algorithm);
  apply_on_device(K, xd, yd, ctx);
  const HostMatrix<F> got = yd.to_host(ctx).template cast<F>();
  return double((got - expected).norm() / expected.norm());
}

// Median time of Y = K X with `algorithm` forced (3 warm-up runs); -1 where that algorithm
// does not apply (layout, size).
template <class Operator, class T>
double time_forced(const Operator& K, KSAlgorithm algorithm, DeviceMatrix<T>& x, DeviceMatrix<T>& y,
                   int reps, Context& ctx) {
  KSAlgorithmGuard guard(algorithm);
  try {
    return median_device_seconds(
        ctx, [&] { apply_on_device(K, x, y, ctx); }, reps, 3);
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
  double t_small = -1;         // the small-batch kernel, measured up to 64 signals (not 16-bit)
  double error_cublas = -1;    // the Dense (cuBLAS) path's error; -1 where Dense is not run
  double t_tuned = -1;         // Auto with tuning on (--tuned), after its one measurement
  std::string tuned_choice{};  // what tuning cached (algorithm[:tile])
};

// The Dense baseline only where the matrix is at most 16k x 16k.
template <class F>
bool dense_fits(const KSFactor<F>& K) {
  return K.rows() * K.cols() <= (Index(1) << 28);
}

// What tuning cached for the problem whose key ends with `key_tail` (the bench measures one
// dtype and layout at a time, and clears the cache before each).
std::string last_tuned_choice(const std::string& key_tail) {
  for (const auto& [key, value] : tuned_choices())
    if (key.size() >= key_tail.size() && key.ends_with(key_tail)) return value;
  return "?";
}

// One case on signals stored as T (float32, or float16/bfloat16 through a float factor).
template <class T>
Row run_case(const KSPattern& p, Layout layout, Index batch, const Ceilings& ceil,
             const Options& opt, Context& ctx) {
  using F = ComputeScalar<T>;  // the factor's scalar
  std::mt19937 gen(p.a * 131 + p.b * 17 + p.c * 7 + p.d);
  const KSFactor<F> K = KSFactor<F>::random(p, gen);
  DeviceMatrix<T> x(K.cols(), batch, layout, ctx), y(K.rows(), batch, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  auto time_with = [&](KSAlgorithm algorithm) {
    return time_forced(K, algorithm, x, y, opt.reps, ctx);
  };
  Row row{p, dtype_name<T>(), to_string(layout), batch, 0, 0, 0, 0, 0, 0, 0, ""};
  row.t_fused = time_with(KSAlgorithm::Fused);
  // In place where cuBLAS addresses the groups, else through batch-contiguous copies.
  row.t_strided = time_with(KSAlgorithm::StridedGemm);
  row.t_bmm = time_with(KSAlgorithm::Bmm);
  row.t_dense = dense_fits(K) ? time_with(KSAlgorithm::Dense) : -1;
  const KSAlgorithm chosen = ks_auto_algorithm<T>(p, Op::NoTrans, x.view(), y.view());
  row.chosen = std::string(to_string(chosen));
  if (!is_reduced_precision_v<T> && batch <= 64) row.t_small = time_with(KSAlgorithm::SmallBatch);
  row.t_auto = chosen == KSAlgorithm::StridedGemm  ? row.t_strided
               : chosen == KSAlgorithm::SmallBatch ? row.t_small
               : chosen == KSAlgorithm::Dense      ? row.t_dense
                                                   : row.t_fused;
  if (opt.tuned) {
    clear_tuned_choices();
    set_tuning_enabled(true);
    row.t_tuned = time_forced(K, KSAlgorithm::Auto, x, y, opt.reps, ctx);  // tunes in warm-up
    set_tuning_enabled(false);
    row.tuned_choice =
        last_tuned_choice(detail::concat("|B=", batch, "|", p.a, ",", p.b, ",", p.c, ",", p.d));
  }
  // sizeof(T) bytes per signal value and per weight: 16-bit paths read the weights rounded
  // to 16 bits. The flops are the float factor's (2 nnz per signal).
  const double bytes = double(sizeof(T)) * double(batch * (K.rows() + K.cols()) + K.nnz());
  row.roofline = std::max(bytes / ceil.bandwidth, K.flops(batch) / ceil.peak.at(row.dtype));
  row.error = sample_error<T>(K, layout, ctx);
  // cuBLAS's error on the same sample, the yardstick of the 16-bit accuracy criterion.
  if (dense_fits(K)) {
    try {
      row.error_cublas = sample_error<T>(K, layout, ctx, KSAlgorithm::Dense);
    } catch (const DeviceError&) {
      // Dense cannot address these views: error_cublas stays -1.
    }
  }
  return row;
}

// --tile-csv: the tensor-core kernel with each tile that tuning would measure, forced, on
// 16-bit signals (the grid's blocks, b and c >= 48, all run that kernel).
template <class T>
void time_tile_candidates(const KSPattern& p, Layout layout, Index batch, const Options& opt,
                          Context& ctx, std::ofstream& out) {
  std::mt19937 gen(p.a * 131 + p.b * 17 + p.c * 7 + p.d);
  const KSFactor<float> K = KSFactor<float>::random(p, gen);
  DeviceMatrix<T> x(K.cols(), batch, layout, ctx), y(K.rows(), batch, layout, ctx);
  fill_random_device(x.view(), 42, ctx);
  const bool batch_contiguous = layout == Layout::RowMajor || batch == 1;
  const auto candidates = detail::ks_mma_tile_candidates(p.b, p.d, batch, batch_contiguous);
  for (std::size_t t = 0; t < candidates.size(); ++t) {
    const detail::KSMmaTileGuard tile(candidates[t]);
    const double seconds = time_forced(K, KSAlgorithm::Fused, x, y, opt.reps, ctx);
    out << p.a << "," << p.b << "," << p.c << "," << p.d << "," << dtype_name<T>() << ","
        << to_string(layout) << "," << batch << "," << detail::to_string(candidates[t]) << ","
        << (t == 0) << "," << seconds << "\n";
  }
  out.flush();
}

void time_tiles(const std::string& dtype, const KSPattern& p, Layout layout, Index batch,
                const Options& opt, Context& ctx, std::ofstream& out) {
  if (dtype == "float16") return time_tile_candidates<strop::half>(p, layout, batch, opt, ctx, out);
  time_tile_candidates<bfloat16>(p, layout, batch, opt, ctx, out);
}

// run_case for the dtype named in --dtypes.
Row run_dtype(const std::string& dtype, const KSPattern& p, Layout layout, Index batch,
              const Ceilings& ceil, const Options& opt, Context& ctx) {
  if (dtype == "float16") return run_case<strop::half>(p, layout, batch, ceil, opt, ctx);
  if (dtype == "bfloat16") return run_case<bfloat16>(p, layout, batch, ceil, opt, ctx);
  return run_case<float>(p, layout, batch, ceil, opt, ctx);
}

void write_row(std::ofstream& csv, const Row& r) {
  char line[640];
  std::snprintf(
      line, sizeof line,
      "%lld,%lld,%lld,%lld,%s,%s,%lld,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.3e,%.6e,%.3e,%.6e,%s\n",
      (long long)r.p.a, (long long)r.p.b, (long long)r.p.c, (long long)r.p.d, r.dtype.c_str(),
      r.layout.c_str(), (long long)r.batch, r.chosen.c_str(), r.t_auto, r.t_fused, r.t_strided,
      r.t_bmm, r.t_dense, r.roofline, r.error, r.t_small, r.error_cublas, r.t_tuned,
      r.tuned_choice.c_str());
  csv << line;
  std::fputs(line, stdout);
}

double best_baseline(const Row& r) {
  double best = r.t_bmm;
  if (r.t_dense > 0 && (best < 0 || r.t_dense < best)) best = r.t_dense;
  return best;
}

// Auto against min(bmm, dense) over the grid rows of one dtype and layout ("" pools both).
struct Summary {
  int total = 0, wins = 0;
  std::vector<double> speedups, over_roofline;
  std::optional<double> max_error_over_cublas;  // over rows where both errors are > 0
  double win_rate() const { return total ? double(wins) / total : 0; }
};

// `tuned`: Auto with tuning on (t_tuned) in place of the model's Auto.
Summary summarize(const std::vector<Row>& rows, const std::string& dtype, const std::string& layout,
                  bool tuned = false) {
  Summary s;
  for (const Row& r : rows) {
    if (r.dtype != dtype || (!layout.empty() && r.layout != layout)) continue;
    if (r.error > 0 && r.error_cublas > 0)
      s.max_error_over_cublas =
          std::max(s.max_error_over_cublas.value_or(0.0), r.error / r.error_cublas);
    const double ours = tuned ? r.t_tuned : r.t_auto;
    if (ours <= 0 || best_baseline(r) <= 0) continue;
    ++s.total;
    const double speedup = best_baseline(r) / ours;
    s.wins += speedup > 1.0;
    s.speedups.push_back(speedup);
    s.over_roofline.push_back(ours / r.roofline);
  }
  return s;
}

// The JSON key prefix of a dtype (the names).
std::string key_prefix(const std::string& dtype) {
  return dtype == "float16" ? "fp16" : dtype == "bfloat16" ? "bf16" : "fp32";
}

void print_summary(const std::string& dtype, const std::string& layout, const Summary& s) {
  std::printf(
      "# %s %s: %d cases, ours beats min(bmm, dense) in %.1f%%, median speedup %.2fx, "
      "median time / roofline %.2f",
      key_prefix(dtype).c_str(), layout.empty() ? "both layouts" : layout.c_str(), s.total,
      100 * s.win_rate(), bench::median_of(s.speedups), bench::median_of(s.over_roofline));
  if (s.max_error_over_cublas) std::printf(", max error / cuBLAS's %.2f", *s.max_error_over_cublas);
  std::printf("\n");
}

// ", \"<key>_win_rate\": ..., ..." for one summary.
void write_summary_keys(std::ofstream& json, const std::string& key, const Summary& s) {
  json << ", \"" << key << "_win_rate\": " << s.win_rate() << ", \"" << key
       << "_median_speedup\": " << bench::median_of(s.speedups) << ", \"" << key
       << "_median_time_over_roofline\": " << bench::median_of(s.over_roofline);
}

// The summary JSON over the grid rows: per dtype and layout (<prefix>_bsl_* for RowMajor,
// <prefix>_bsf_* for ColMajor); fp32_median_time_over_roofline is the RowMajor value; the
// 16-bit dtypes also get both layouts pooled and the largest ratio of our error to cuBLAS's.
void write_summary(const std::string& path, const std::vector<Row>& grid_rows, const Options& opt) {
  std::ofstream json(path);
  json << "{\"device\": \"" << device_name(0) << "\"";
  for (const std::string& dtype : opt.dtypes) {
    const std::string prefix = key_prefix(dtype);
    for (const std::string layout : {"RowMajor", "ColMajor"}) {
      const Summary s = summarize(grid_rows, dtype, layout);
      print_summary(dtype, layout, s);
      write_summary_keys(json, prefix + (layout == "RowMajor" ? "_bsl" : "_bsf"), s);
      if (!opt.tuned) continue;
      const Summary t = summarize(grid_rows, dtype, layout, true);
      std::printf("# (tuned) ");
      print_summary(dtype, layout, t);
      write_summary_keys(json, prefix + "_tuned" + (layout == "RowMajor" ? "_bsl" : "_bsf"), t);
    }
    if (dtype == "float32") {
      json << ", \"fp32_median_time_over_roofline\": "
           << bench::median_of(summarize(grid_rows, dtype, "RowMajor").over_roofline);
      continue;
    }
    const Summary pooled = summarize(grid_rows, dtype, "");
    print_summary(dtype, "", pooled);
    write_summary_keys(json, prefix, pooled);
    if (opt.tuned) {
      const Summary t = summarize(grid_rows, dtype, "", true);
      std::printf("# (tuned) ");
      print_summary(dtype, "", t);
      write_summary_keys(json, prefix + "_tuned", t);
    }
    json << ", \"" << prefix << "_max_error_over_cublas\": ";
    if (pooled.max_error_over_cublas)
      json << *pooled.max_error_over_cublas;
    else
      json << "null";
  }
  json << "}\n";
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
  const auto K = KSChain<ComputeScalar<T>>::random(butterfly_patterns(n), gen);
  DeviceMatrix<T> x(n, batch, layout, ctx), y(n, batch, layout, ctx);
  fill_random_device(x.view(), 7, ctx);
  auto time_with = [&](KSAlgorithm algorithm) {
    return time_forced(K, algorithm, x, y, opt.reps, ctx);
  };
  ChainRow row{n, batch, Index(K.size()), dtype_name<T>(), to_string(layout), "", 0, -1, 0, 0};
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
  // Per key ("chain_fusion_speedup_<n>" for float, "..._fp16_<n>" for half): the smaller
  // over the layouts.
  std::map<std::string, double> speedup;
  auto record = [&](const std::string& key, const ChainRow& r) {
    write_chain_row(csv, r);
    const double s = r.t_per_factor / r.t_chain;
    speedup[key] = speedup.count(key) ? std::min(speedup[key], s) : s;
  };
  for (Index n : {256, 1024, 4096, 16384}) {
    for (Layout layout : opt.layouts) {
      const std::string size = std::to_string(n);
      record("chain_fusion_speedup_" + size, run_chain<float>(n, layout, 4096, ceil, opt, ctx));
      record("chain_fusion_speedup_fp16_" + size,
             run_chain<strop::half>(n, layout, 4096, ceil, opt, ctx));
      write_chain_row(csv, run_chain<std::complex<float>>(n, layout, 4096, ceil, opt, ctx));
    }
  }
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\"";
  for (const auto& [key, s] : speedup)
    json << ", \"" << key << "\": " << s;
  json << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (bench::read_common_flag(arg, next, opt)) continue;
    if (arg == "--stride")
      opt.stride = std::stoi(next());
    else if (arg == "--batch")
      opt.batch = std::stoll(next());
    else if (arg == "--quick")
      opt.quick = true;
    else if (arg == "--chains")
      opt.chains = true;
    else if (arg == "--chain-csv")
      opt.chain_csv = next();
    else if (arg == "--only") {
      std::stringstream list(next());
      Index v[4] = {0, 0, 0, 0};
      char comma = 0;
      list >> v[0] >> comma >> v[1] >> comma >> v[2] >> comma >> v[3];
      opt.only = KSPattern{v[0], v[1], v[2], v[3]};
      opt.sweep = false;
    } else if (arg == "--offset")
      opt.offset = std::stoi(next());
    else if (arg == "--d") {
      for (const Index d : bench::index_list(next()))
        opt.d_list.push_back(d);
    } else if (arg == "--no-sweep")
      opt.sweep = false;
    else if (arg == "--tuned")
      opt.tuned = true;
    else if (arg == "--tile-csv")
      opt.tile_csv = next();
    else if (arg == "--layout") {
      const std::string l = next();
      opt.layouts = {l == "col" ? Layout::ColMajor : Layout::RowMajor};
    } else if (arg == "--dtypes") {
      opt.dtypes.clear();
      for (const std::string& d : bench::split_list(next())) {
        if (d != "float32" && d != "float16" && d != "bfloat16") {
          std::fprintf(stderr, "ks_bench: unknown dtype '%s' (float32, float16, bfloat16)\n",
                       d.c_str());
          return 2;
        }
        opt.dtypes.push_back(d);
      }
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
  ceil.peak["float16"] = gemm_peak<strop::half>(ctx);
  ceil.peak["bfloat16"] = gemm_peak<bfloat16>(ctx);
  std::printf("# 16-bit tensor-core GEMM (fp32 acc.): fp16 %.1f TFLOP/s, bf16 %.1f TFLOP/s\n",
              ceil.peak["float16"] * 1e-12, ceil.peak["bfloat16"] * 1e-12);
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << ceil.bandwidth
      << " fp32_peak=" << ceil.peak["float32"] << " fp16_peak=" << ceil.peak["float16"]
      << " bf16_peak=" << ceil.peak["bfloat16"] << "\n";
  csv << "a,b,c,d,dtype,layout,batch,auto_choice,t_auto,t_fused,t_strided_gemm,t_bmm,t_dense,"
         "t_roofline,rel_error,t_small_batch,rel_error_cublas,t_tuned,tuned_choice\n";
  std::ofstream tiles;
  if (!opt.tile_csv.empty()) {
    tiles.open(opt.tile_csv);
    tiles << "# device=" << device_name(0)
          << "\na,b,c,d,dtype,layout,batch,tile,heuristic,t_fused\n";
  }
  std::vector<KSPattern> grid =
      opt.only ? std::vector<KSPattern>{*opt.only} : paper_grid(opt.batch);
  if (!opt.d_list.empty())
    std::erase_if(grid, [&](const KSPattern& p) {
      return std::find(opt.d_list.begin(), opt.d_list.end(), p.d) == opt.d_list.end();
    });
  std::vector<Row> grid_rows;
  for (std::size_t g = opt.offset; g < grid.size(); g += opt.quick ? 40 : opt.stride) {
    for (Layout layout : opt.layouts) {
      for (const std::string& dtype : opt.dtypes) {
        Row r = run_dtype(dtype, grid[g], layout, opt.batch, ceil, opt, ctx);
        write_row(csv, r);
        if (tiles.is_open() && dtype != "float32")
          time_tiles(dtype, grid[g], layout, opt.batch, opt, ctx, tiles);
        grid_rows.push_back(r);
      }
    }
  }
  // Batch-size sweep on a few patterns (butterfly-like small blocks and paper-like ones).
  const std::vector<KSPattern> sweep = {
      {1, 64, 64, 16}, {4, 128, 128, 4}, {1, 256, 64, 8}, {64, 2, 2, 64}, {1, 4, 4, 256}};
  for (const KSPattern& p : opt.sweep ? sweep : std::vector<KSPattern>{})
    for (Index b : {1, 16, 128, 1024, 4096, 25088, 65536})
      for (Layout layout : opt.layouts)
        for (const std::string& dtype : opt.dtypes)
          write_row(csv, run_dtype(dtype, p, layout, b, ceil, opt, ctx));

  write_summary(opt.json, grid_rows, opt);
  return 0;
}
