// `strop bench ks|kron|blr|factorize`: a short benchmark (seconds on a CPU) of structured
// against dense application, or of the factorizations. CSV on stdout (or --csv FILE), a
// table on stderr when stdout is a file, and a PNG plot with --plot when gnuplot exists.
// Times are medians of wall-clock runs (GPU: CUDA events); the dense baseline is Eigen's
// GEMM on the CPU and cuBLAS on the GPU, on the same signals.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/device_choice.hpp"
#include "cli/divisors.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "io/atomic_file.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

namespace fs = std::filesystem;
using T = float;
using Matrix = HostMatrix<T>;
using BatchLast = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct BenchOptions {
  std::string which;
  std::vector<Index> sizes;
  Index batch = 64;
  int repeats = 5;
  std::string device = "cpu";
  std::string csv;
  std::string plot;
};

struct Result {
  std::string bench, op, device;
  Index n = 0, batch = 0, params = 0;
  double structured_ms = kNaN, dense_ms = kNaN, rel_error = kNaN;
};

// One structured operator of size n, and how to make it.
struct Candidate {
  std::string name;
  std::function<AnyOperator<T>(Index n, std::mt19937& rng)> make;
};

std::vector<Candidate> apply_candidates(const std::string& which) {
  if (which == "ks")
    return {{"butterfly",
             [](Index n, std::mt19937& rng) -> AnyOperator<T> {
               return KSChain<T>::random(butterfly_patterns(n), rng);
             }},
            {"monarch (KS chain)", [](Index n, std::mt19937& rng) -> AnyOperator<T> {
               return KSChain<T>::random(monarch_patterns(n, n, largest_divisor_up_to_sqrt(n)),
                                         rng);
             }}};
  if (which == "kron")
    return {{"kron (2 dense factors)", [](Index n, std::mt19937&) -> AnyOperator<T> {
               const Index p = largest_divisor_up_to_sqrt(n);
               const auto scale = [](Index k) { return T(1) / std::sqrt(T(k)); };
               return kron(Dense<T>(scale(p) * Matrix::Random(p, p)),
                           Dense<T>(scale(n / p) * Matrix::Random(n / p, n / p)));
             }}};
  // blr
  return {{"monarch (BLR rank 1)",
           [](Index n, std::mt19937& rng) -> AnyOperator<T> {
             const Index p = largest_divisor_up_to_sqrt(n);
             return Monarch<T>::random(n, n, p, p, 1, rng);
           }},
          {"blast (16x16 blocks rank n/8)",
           [](Index n, std::mt19937& rng) -> AnyOperator<T> {
             return Blast<T>::random(n, n, 16, 16, std::max<Index>(n / 8, 1), rng);
           }},
          {"lowrank (rank n/16)", [](Index n, std::mt19937& rng) -> AnyOperator<T> {
             return LowRank<T>::random(n, n, std::max<Index>(n / 16, 1), rng);
           }}};
}

void check_size(const std::string& which, Index n) {
  require<ShapeError>(n >= 16, "bench: sizes must be >= 16, got ", n);
  if (which == "ks" || which == "factorize")
    require<ShapeError>(std::has_single_bit(std::uint64_t(n)), "bench ", which,
                        ": sizes must be powers of two, got ", n);
  if (which == "blr")
    require<ShapeError>(n % 16 == 0, "bench blr: sizes must be multiples of 16, got ", n);
}

void skipped(const std::string& name, const DeviceError& e) {
  if (Progress::enabled()) std::fputs("\n", stderr);
  std::fprintf(stderr, "bench: %s skipped on the GPU: %s\n", name.c_str(), e.what());
}

double time_host(const std::function<void()>& work, int repeats) {
  return median_host_seconds(work, repeats, 1);
}

// Structured vs dense application, for each size and candidate.
std::vector<Result> bench_apply(const BenchOptions& o, bool gpu) {
  const std::vector<Candidate> candidates = apply_candidates(o.which);
  std::vector<Result> results;
  std::mt19937 rng(7);
  Progress progress("bench " + o.which, Index(o.sizes.size() * (candidates.size() + 1)));
  Index step = 0;
  for (Index n : o.sizes) {
    // Signals stored batch-last (RowMajor), the layout the KS kernels prefer; Eigen's GEMM
    // is as fast on it.
    const BatchLast x = Matrix::Random(n, o.batch);
    std::vector<AnyOperator<T>> ops;
    for (const Candidate& c : candidates)
      ops.push_back(c.make(n, rng));
    // The dense baseline applies the same matrix as the first candidate.
    const Matrix dense = ops.front().to_dense();
    BatchLast y_dense(n, o.batch);
    double dense_seconds = 0;
    if (gpu) {
      Context& ctx = default_context();
      const Dense<T> d(dense);
      const DeviceMatrix<T> xd = to_device(Matrix(x), Layout::RowMajor);
      DeviceMatrix<T> yd(n, o.batch, Layout::RowMajor);
      dense_seconds = median_device_seconds(
          ctx, [&] { apply(d, xd.view(), yd.view()); }, o.repeats, 2);
    } else {
      dense_seconds = time_host([&] { y_dense.noalias() = dense * x; }, o.repeats);
    }
    progress.update(++step, "n = " + std::to_string(n) + " dense");
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const AnyOperator<T>& op = ops[i];
      Result r{o.which, candidates[i].name, gpu ? "cuda" : "cpu", n, o.batch, op.parameter_count()};
      r.dense_ms = dense_seconds * 1e3;
      const BatchLast reference = op.to_dense() * x;
      BatchLast y(n, o.batch);
      if (gpu) {
        Context& ctx = default_context();
        const DeviceMatrix<T> xd = to_device(Matrix(x), Layout::RowMajor);
        DeviceMatrix<T> yd(n, o.batch, Layout::RowMajor);
        try {
          r.structured_ms = 1e3 * median_device_seconds(
                                      ctx, [&] { apply(op, xd.view(), yd.view()); }, o.repeats, 2);
        } catch (const DeviceError& e) {  // a family without a GPU path yet: say so, go on
          skipped(candidates[i].name, e);
          progress.update(++step);
          continue;
        }
        y = yd.to_host();
      } else {
        r.structured_ms = 1e3 * time_host([&] { apply(op, view(x), view(y)); }, o.repeats);
      }
      r.rel_error = double((y - reference).norm() / reference.norm());
      results.push_back(r);
      progress.update(++step, "n = " + std::to_string(n) + " " + candidates[i].name);
    }
  }
  return results;
}

// Hadamard matrix: an exact butterfly, the KS factorization's test case.
Matrix hadamard(Index n) {
  Matrix h(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i)
      h(i, j) = std::popcount(std::uint64_t(i & j)) % 2 ? -1.f : 1.f;
  return h;
}

std::vector<Result> bench_factorize(const BenchOptions& o, bool gpu) {
  const Device device = gpu ? Device::cuda : Device::cpu;
  const std::string dev = gpu ? "cuda" : "cpu";
  std::vector<Result> results;
  Progress progress("bench factorize", Index(o.sizes.size() * 5));
  Index step = 0;
  for (Index n : o.sizes) {
    const Matrix h = hadamard(n);
    const Matrix a = Matrix::Random(n, n);
    const Index p = largest_divisor_up_to_sqrt(n);
    auto add = [&](const std::string& name, const auto& factorize) {
      try {
        const FactorReport report = factorize();
        results.push_back({"factorize", name, dev, n, 0, report.parameters, report.seconds * 1e3,
                           kNaN, report.relative_error});
      } catch (const DeviceError& e) {
        skipped(name, e);
      }
      progress.update(++step, "n = " + std::to_string(n) + " " + name);
    };
    KSFactorizeOptions ko;
    ko.device = device;
    add("butterfly (Hadamard)",
        [&] { return factorize_ks_chain(h, square_dyadic_chain(n), ko).report; });
    add("monarch projection",
        [&] { return factorize_monarch(a, p, p, 1, {.device = device}).report; });
    LowRankOptions lo;
    lo.rank = std::max<Index>(n / 16, 1);
    lo.device = device;
    add("lowrank (rank n/16)", [&] { return factorize_lowrank(a, lo).report; });
    add("kron (1 term)",
        [&] { return factorize_kron(a, p, p, {.terms = 1, .device = device}).report; });
    BlastFactorizeOptions bo;
    bo.steps = 20;
    bo.device = device;
    add("blast (20 steps)",
        [&] { return factorize_blast(a, 4, 4, std::max<Index>(n / 16, 1), bo).report; });
  }
  return results;
}

std::string csv_number(double v) {
  return std::isnan(v) ? "" : format("%.6g", v);
}

std::string csv_text(const std::vector<Result>& results) {
  std::string text =
      "bench,operator,device,threads,dtype,n,batch,params,structured_ms,dense_ms,speedup,"
      "rel_error\n";
  for (const Result& r : results)
    text +=
        format("%s,%s,%s,%d,float32,%lld,%lld,%lld,%s,%s,%s,%s\n", r.bench.c_str(), r.op.c_str(),
               r.device.c_str(), Eigen::nbThreads(), static_cast<long long>(r.n),
               static_cast<long long>(r.batch), static_cast<long long>(r.params),
               csv_number(r.structured_ms).c_str(), csv_number(r.dense_ms).c_str(),
               csv_number(r.dense_ms / r.structured_ms).c_str(), csv_number(r.rel_error).c_str());
  return text;
}

// A device or a pipe (/dev/stdout, /dev/full) in the --csv place: written straight into,
// since a rename over it would replace the device node itself with a regular file.
bool is_special_file(const std::string& file) {
  std::error_code ec;
  const fs::file_status s = fs::status(file, ec);  // follows links
  return fs::exists(s) && !fs::is_regular_file(s) && !fs::is_directory(s);
}

// What saving the CSV would refuse, refused before the (possibly long) run. A device or a
// pipe is written into as it is (save_csv).
void require_csv_output(const std::string& file) {
  if (!is_special_file(file)) io::require_replaceable(file);
}

// The whole CSV replaces `file` at once: a failed write (a full disk) or a crash leaves the
// old file as it was, never half of a new one.
void save_csv(const std::string& file, const std::string& text) {
  if (!is_special_file(file)) {
    io::write_file_atomically(file, [&](std::ostream& out) { out << text; });
    return;
  }
  std::FILE* f = std::fopen(file.c_str(), "w");
  require<IoError>(f != nullptr, "bench: cannot write ", file);
  const bool written = std::fputs(text.c_str(), f) >= 0;
  require<IoError>(std::fclose(f) == 0 && written, "bench: writing ", file, " failed (disk full?)");
}

void print_table(std::FILE* out, const std::vector<Result>& results, bool factorize) {
  Table table(factorize ? std::vector<std::string>{"factorization", "device", "n", "params",
                                                   "seconds", "rel. error"}
                        : std::vector<std::string>{"operator", "device", "n", "batch", "params",
                                                   "ms", "dense ms", "speedup", "error"});
  for (const Result& r : results) {
    if (factorize)
      table.add_row({r.op, r.device, std::to_string(r.n), format_count(double(r.params)),
                     format("%.3f", r.structured_ms / 1e3), format_error(r.rel_error)});
    else
      table.add_row({r.op, r.device, std::to_string(r.n), std::to_string(r.batch),
                     format_count(double(r.params)), format_ms(r.structured_ms / 1e3),
                     format_ms(r.dense_ms / 1e3), format_ratio(r.dense_ms / r.structured_ms),
                     format_error(r.rel_error)});
  }
  table.print(out);
}

bool have_gnuplot() {
  return std::system("command -v gnuplot > /dev/null 2>&1") == 0;
}

// Time against n, log-log: one line per operator, plus the dense baseline. The data go
// inline (gnuplot data blocks), one block per line.
void plot(const BenchOptions& o, const std::vector<Result>& results) {
  std::vector<std::string> names;
  for (const Result& r : results)
    if (std::find(names.begin(), names.end(), r.op) == names.end()) names.push_back(r.op);
  const bool factorize = o.which == "factorize";
  // A gnuplot single-quoted string: '' stands for ', and it cannot hold a line break.
  require<IoError>(o.plot.find_first_of("\n\r") == std::string::npos,
                   "bench: --plot: a file name with a line break");
  std::string output;
  for (char ch : o.plot)
    output += ch == '\'' ? std::string("''") : std::string(1, ch);
  std::string script = "set terminal pngcairo size 900,600\nset output '" + output +
                       "'\nset logscale xy\nset key top left\nset grid\nset xlabel 'n'\n"
                       "set ylabel '" +
                       (factorize ? "factorization ms" : "ms per application") +
                       "'\nset title 'strop bench " + o.which + " (" +
                       (results.empty() ? "" : results.front().device) +
                       (factorize ? "" : ", batch " + std::to_string(o.batch)) + ", float32)'\n";
  std::string plots;
  int blocks = 0;
  auto block = [&](const std::string& title, auto&& value, const char* style) {
    const std::string id = "$d" + std::to_string(blocks++);
    script += id + " << EOD\n";
    for (const Result& r : results)
      if (r.op == title || (title == "dense" && r.op == names.front()))
        script += format("%lld %.9g\n", static_cast<long long>(r.n), value(r));
    script += "EOD\n";
    plots += (plots.empty() ? "plot " : ", ") + id + " using 1:2 with linespoints " + style +
             " title '" + title + "'";
  };
  for (const std::string& name : names)
    block(
        name, [](const Result& r) { return r.structured_ms; }, "lw 2");
  if (!factorize)
    block(
        "dense", [](const Result& r) { return r.dense_ms; }, "dashtype 2 lc 'black'");
  script += plots + "\n";
  std::FILE* pipe = popen("gnuplot 2>&1", "w");
  require<IoError>(pipe != nullptr, "bench: cannot start gnuplot");
  std::fputs(script.c_str(), pipe);
  require<IoError>(pclose(pipe) == 0, "bench: gnuplot failed to write ", o.plot);
  std::fprintf(stderr, "plot written to %s\n", o.plot.c_str());
}

int run_bench(BenchOptions o) {
  const bool gpu = use_gpu(o.device, "bench");
  if (o.sizes.empty())
    o.sizes = o.which == "factorize" ? std::vector<Index>{256, 512, 1024}
              : o.which == "kron"    ? std::vector<Index>{256, 1024, 4096}
                                     : std::vector<Index>{256, 1024, 4096};
  for (Index n : o.sizes)
    check_size(o.which, n);
  if (!o.plot.empty()) require<IoError>(have_gnuplot(), "bench: --plot needs gnuplot on the PATH");
  if (!o.csv.empty()) require_csv_output(o.csv);

  const std::vector<Result> results =
      o.which == "factorize" ? bench_factorize(o, gpu) : bench_apply(o, gpu);

  // CSV to --csv FILE (a readable table then goes to stdout) or to stdout.
  const std::string csv = csv_text(results);
  if (!o.csv.empty()) {
    save_csv(o.csv, csv);
    print_table(stdout, results, o.which == "factorize");
  } else {
    std::fputs(csv.c_str(), stdout);
    if (isatty(STDOUT_FILENO) == 0) print_table(stderr, results, o.which == "factorize");
  }
  if (!o.plot.empty()) plot(o, results);
  return 0;
}

}  // namespace

Subcommand add_bench_command(CLI::App& parent) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench",
      "Short benchmark (float32) of structured vs dense application (ks: butterfly and\n"
      "Monarch chains; kron: Kronecker product; blr: Monarch, BLAST, low rank), or of the\n"
      "factorizations' time and error. CSV on stdout or --csv FILE, PNG with --plot FILE.");
  app->add_option("WHAT", o->which, "ks, kron, blr or factorize")
      ->required()
      ->check(CLI::IsMember({"ks", "kron", "blr", "factorize"}));
  app->add_option("--sizes", o->sizes,
                  "Operator sizes n, comma-separated (default 256,1024,4096; factorize: "
                  "256,512,1024)")
      ->delimiter(',');
  app->add_option("-b,--batch", o->batch, "Number of signals")
      ->check(CLI::Range(Index(1), Index(1) << 20))
      ->capture_default_str();
  app->add_option("--repeats", o->repeats, "Timed runs per measurement (the median is kept)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_device_option(*app, o->device, true);
  app->add_option("--csv", o->csv, "Write the CSV here (a table then goes to stdout)");
  app->add_option("--plot", o->plot, "Write a PNG plot here (needs gnuplot)");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace strop::cli
