// Factorization benchmark, three sections, one CSV:
//   scaling: time and relative error versus size N for the square-dyadic butterfly,
//            Monarch (b = 4, 16, 64), low rank and BLAST, on the CPU and (when present) the
//            GPU; the CPU stops at --max-cpu-n (default 4096: beyond it a 2-core machine
//            takes minutes per row) and runs BLAST for fewer steps there (blast_steps);
//   budget:  relative error versus parameter count of each structure on structured
//            matrices (RBF kernel on a 2-D grid, 2-D Laplacian, DCT, Gaussian);
//   dft:     recovery of the DFT as a butterfly with bit-reversed columns.
// Columns: section,structure,config,matrix,N,device,dtype,params,seconds,rel_error
// (config: the structure's settings, as rules of n in the scaling section; seconds: the
// factorization alone, best of --reps; rel_error: nan where not measured).
// A JSON summary holds the targets (null where this run did not measure them).
//   factorize_bench [--quick | --full | --targets] [--csv PATH] [--json PATH] [--no-gpu] [--reps R]
//                   [--max-cpu-n N]
// --quick: seconds, small sizes (CI smoke). default: N = 512..4096. --full: adds N = 8192
// (f64) and 16384 (f32) on the GPU, sized to finish in about five minutes on an H200.
// --targets: only the sizes of the targets (4096, and 16384 on the GPU) and the DFT.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <random>
#include <string>

#include "strop/factorize/factorize.hpp"
#include "strop/strop.hpp"

using namespace strop;

namespace {

// ---- targets ---------------------------------------------------------------------------

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

// ---- output ----------------------------------------------------------------------------

struct Row {
  std::string section, structure, config, matrix;
  Index n = 0;
  Device device = Device::cpu;
  std::string dtype;
  FactorReport report;
};

class Csv {
 public:
  explicit Csv(const std::string& path) {
    if (!path.empty()) {
      file_.open(path);
      if (!file_) std::fprintf(stderr, "factorize_bench: cannot write %s\n", path.c_str());
    }
    emit("section,structure,config,matrix,N,device,dtype,params,seconds,rel_error");
  }
  void add(const Row& r) {
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%s,%s,%lld,%s,%s,%lld,%.6f,%.3e", r.section.c_str(),
                  r.structure.c_str(), r.config.c_str(), r.matrix.c_str(),
                  static_cast<long long>(r.n), r.device == Device::cpu ? "cpu" : "cuda",
                  r.dtype.c_str(), static_cast<long long>(r.report.parameters), r.report.seconds,
                  r.report.relative_error);
    emit(line);
  }

 private:
  void emit(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (file_) file_ << line << '\n' << std::flush;
  }
  std::ofstream file_;
};

// A printf-formatted label of Index values (GCC 12 at -O3 misreads `"text" + std::string`
// as an overlapping memcpy, -Werror=restrict).
template <class... Values>
std::string label(const char* format, Values... values) {
  char text[128];
  std::snprintf(text, sizeof text, format, static_cast<long long>(values)...);
  return text;
}

template <class T>
const char* dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, double>) return "f64";
  if constexpr (std::is_same_v<T, std::complex<float>>) return "c64";
  return "c128";
}

// The operator each factorization returns.
template <class T>
const KSChain<T>& operator_of(const KSFactorization<T>& f) {
  return f.chain;
}
template <class T>
const Monarch<T>& operator_of(const MonarchFactorization<T>& f) {
  return f.monarch;
}
template <class T>
const LowRank<T>& operator_of(const LowRankFactorization<T>& f) {
  return f.lowrank;
}
template <class T>
const Blast<T>& operator_of(const BlastFactorization<T>& f) {
  return f.blast;
}

// The report of the fastest of `reps` runs of `factorize` (timings vary most on small,
// shared machines), which must not measure its own error; the error of that run's operator
// is measured afterwards when `measure` (a dense evaluation, outside the timing).
template <class T, class Factorize>
FactorReport timed(int reps, bool measure, const HostMatrix<T>& A, const Factorize& factorize) {
  auto best = factorize();
  for (int r = 1; r < reps; ++r) {
    auto next = factorize();
    if (next.report.seconds < best.report.seconds) best = std::move(next);
  }
  if (measure) {
    best.report.relative_error =
        double((A - operator_of(best).to_dense()).norm()) / std::max(double(A.norm()), 1e-300);
  }
  return best.report;
}

// ---- sections --------------------------------------------------------------------------

struct Settings {
  bool quick = false, full = false, targets = false, gpu = false;
  int reps = 1;
  Index max_cpu_n = 4096;
};

// The targets; every key is written, null when this run did not measure it.
struct Summary {
  std::map<std::string, std::optional<double>> values{
      {"butterfly_4096_f64_cpu_s", {}},  {"butterfly_4096_f64_gpu_s", {}},
      {"butterfly_16384_f32_gpu_s", {}}, {"monarch_4096_b64_cpu_s", {}},
      {"monarch_4096_b64_gpu_s", {}},    {"blast_4096_300steps_gpu_s", {}},
      {"dft_recovery_rel_err_f64", {}}};
  void set(const std::string& key, double v) { values.at(key) = v; }
  void write(const std::string& path, const std::string& device) const {
    std::ofstream out(path);
    if (!out) {
      std::fprintf(stderr, "factorize_bench: cannot write %s\n", path.c_str());
      return;
    }
    out << "{\"device\": \"" << device << "\"";
    for (const auto& [key, value] : values) {
      out << ", \"" << key << "\": ";
      if (value) {
        out << *value;
      } else {
        out << "null";
      }
    }
    out << "}\n";
  }
};

// BLAST: b = 16 blocks (the papers' usual choice), rank N / 16, 300 steps as in the papers;
// in the scaling section the CPU runs 30 (a step costs about 12 M N r flops: 300 steps at
// N = 1024 would take 15 s on two cores) and stops at N = 1024.
constexpr Index blast_blocks = 16;
constexpr Index blast_paper_steps = 300;
Index blast_steps(Device d, bool quick) {
  return quick ? 10 : (d == Device::cuda ? blast_paper_steps : 30);
}

template <class T>
void scaling_at(Index n, Device dev, const Settings& s, Csv& csv, Summary& summary) {
  const HostMatrix<T> W = butterfly_target<T>(n);
  const char* dtype = dtype_name<T>();
  const bool cpu = dev == Device::cpu;
  // The error evaluates the operator densely: measured where that stays cheap.
  const bool measure = n <= 4096;
  auto add = [&](const std::string& structure, const std::string& config,
                 const FactorReport& report) {
    csv.add({"scaling", structure, config, "butterfly+noise", n, dev, dtype, report});
  };

  const auto butterfly = timed(s.reps, measure, W, [&] {
    return factorize_ks_chain(W, butterfly_patterns(n), {.compute_error = false, .device = dev});
  });
  add("butterfly", "radix2", butterfly);
  if (n == 4096 && std::is_same_v<T, double>)
    summary.set(cpu ? "butterfly_4096_f64_cpu_s" : "butterfly_4096_f64_gpu_s", butterfly.seconds);
  if (n == 16384 && std::is_same_v<T, float> && !cpu)
    summary.set("butterfly_16384_f32_gpu_s", butterfly.seconds);

  for (Index b : {4, 16, 64}) {
    if (n % b != 0) continue;
    const Index rank = std::max<Index>(1, n / (b * b));
    const auto m = timed(s.reps, measure, W, [&] {
      return factorize_monarch(W, b, b, rank, {.compute_error = false, .device = dev});
    });
    add("monarch", label("b%lld_r=max(1;n/%lld)", b, b * b), m);
    if (n == 4096 && b == 64 && std::is_same_v<T, double>)
      summary.set(cpu ? "monarch_4096_b64_cpu_s" : "monarch_4096_b64_gpu_s", m.seconds);
  }

  // Randomized SVD above N = 1024; its range finder runs on the host on either device
  // (15 s at N = 8192 on an H100 machine's 16 cores), so larger sizes are left out.
  if (n <= 4096) {
    const auto l = timed(s.reps, measure, W, [&] {
      return factorize_lowrank(W, {.rank = n / 16, .compute_error = false, .device = dev});
    });
    add("lowrank", "r=n/16", l);
  }

  const bool blast_here = cpu ? n <= (s.quick ? 256 : 1024) : n <= (s.full ? 8192 : 4096);
  if (blast_here) {
    const Index steps = blast_steps(dev, s.quick);
    const auto f = timed(1, measure, W, [&] {
      return factorize_blast(W, blast_blocks, blast_blocks, n / 16,
                             {.steps = steps, .compute_error = false, .device = dev});
    });
    add("blast", label("b%lld_r=n/16_%lldsteps", blast_blocks, steps), f);
    if (n == 4096 && steps == 300 && !cpu) summary.set("blast_4096_300steps_gpu_s", f.seconds);
  }
}

void run_scaling(const Settings& s, Csv& csv, Summary& summary) {
  const std::vector<Index> sizes = s.quick     ? std::vector<Index>{256, 512}
                                   : s.targets ? std::vector<Index>{4096, 16384}
                                   : s.full ? std::vector<Index>{512, 1024, 2048, 4096, 8192, 16384}
                                            : std::vector<Index>{512, 1024, 2048, 4096};
  std::vector<Device> devices{Device::cpu};
  if (s.gpu) devices.push_back(Device::cuda);
  for (Index n : sizes) {
    for (Device dev : devices) {
      if (dev == Device::cpu && n > s.max_cpu_n) continue;
      // 16384^2 in double is 2 GiB per copy: the largest size runs in single precision.
      if (n >= 16384) {
        scaling_at<float>(n, dev, s, csv, summary);
      } else {
        scaling_at<double>(n, dev, s, csv, summary);
      }
    }
  }
}

void run_dft(const Settings& s, Csv& csv, Summary& summary) {
  const Index n = s.quick ? 256 : 1024;
  HostMatrix<std::complex<double>> F(n, n);
  for (Index j = 0; j < n; ++j)
    for (Index k = 0; k < n; ++k) {
      const double a = -2.0 * std::numbers::pi * double((j * k) % n) / double(n);
      F(j, k) = {std::cos(a), std::sin(a)};
    }
  const auto f =
      factorize_ks_chain(F, butterfly_patterns(n), {.column_permutation = bit_reversal_indices(n)});
  csv.add({"dft", "butterfly", "radix2_bitrev", "dft", n, Device::cpu, "c128", f.report});
  summary.set("dft_recovery_rel_err_f64", f.report.relative_error);
}

// Each structure at a few sizes of its parameter; on the GPU when there is one (the
// butterfly, Monarch and low-rank errors do not depend on the device; BLAST gets its
// device's step count).
void run_budget(const Settings& s, Csv& csv) {
  const Index n = s.quick ? 256 : 1024;
  const Device dev = s.gpu ? Device::cuda : Device::cpu;
  const std::vector<std::pair<std::string, HostMatrix<double>>> targets{
      {"rbf2d", rbf_grid(n)},
      {"laplacian2d", laplacian_2d(n)},
      {"dct", dct(n)},
      {"gaussian", gaussian<double>(n, n, 3)}};
  for (const auto& [name, A] : targets) {
    auto add = [&](const std::string& structure, const std::string& config,
                   const FactorReport& report) {
      csv.add({"budget", structure, config, name, n, dev, "f64", report});
    };
    add("butterfly", "radix2",
        factorize_ks_chain(A, butterfly_patterns(n), {.device = dev}).report);
    // Larger budgets: the most expressive Monarch / radix-2^k chain that fits.
    for (Index divisor : {32, 8, 2}) {
      const Index budget = n * n / divisor;
      try {
        add("ks_chain", label("budget_n2/%lld", divisor),
            factorize_ks_chain(A, chain_for_budget(n, n, budget), {.device = dev}).report);
      } catch (const PatternError&) {
        // Below the butterfly's own parameter count no chain fits: nothing to report.
      }
    }
    for (Index b : {4, 16})
      for (Index rank : {1, 4, 16}) {
        if (rank * b > n) continue;
        add("monarch", label("b%lld_r%lld", b, rank),
            factorize_monarch(A, b, b, rank, {.device = dev}).report);
      }
    for (Index rank : {n / 64, n / 16, n / 4})
      add("lowrank", label("r%lld", rank),
          factorize_lowrank(A, {.rank = rank, .device = dev}).report);
    // The papers' 300 steps on either device: fewer leave BLAST far from its fit (60 steps
    // left the Gaussian and DCT targets at error 1.0), which is not what this section is for.
    const Index steps = s.quick ? 10 : blast_paper_steps;
    for (Index rank : {n / 64, n / 32, n / 16}) {
      add("blast", label("b4_r%lld_%lldsteps", rank, steps),
          factorize_blast(A, 4, 4, rank, {.steps = steps, .device = dev}).report);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  s.gpu = cuda_available();
  std::string json = "bench/results/factorize-summary.json", csv_path;
  for (int i = 1; i < argc; ++i) {
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (!std::strcmp(argv[i], "--quick")) {
      s.quick = true;
    } else if (!std::strcmp(argv[i], "--full")) {
      s.full = true;
    } else if (!std::strcmp(argv[i], "--targets")) {
      s.targets = true;
    } else if (!std::strcmp(argv[i], "--no-gpu")) {
      s.gpu = false;
    } else if (!std::strcmp(argv[i], "--json")) {
      json = value();
    } else if (!std::strcmp(argv[i], "--csv")) {
      csv_path = value();
    } else if (!std::strcmp(argv[i], "--reps")) {
      s.reps = std::max(1, std::atoi(value().c_str()));
    } else if (!std::strcmp(argv[i], "--max-cpu-n")) {
      s.max_cpu_n = std::atoll(value().c_str());
    } else {
      std::fprintf(
          stderr,
          "usage: factorize_bench [--quick | --full | --targets] [--csv PATH] [--json PATH] "
          "[--no-gpu] [--reps R] [--max-cpu-n N]\n");
      return 2;
    }
  }
  if (s.gpu) {
    // The first device call pays for the context, cuBLAS and cuSOLVER: keep it out of the
    // timings.
    const HostMatrix<double> warm = gaussian<double>(64, 64, 1);
    factorize_ks_chain(warm, butterfly_patterns(64), {.device = Device::cuda});
    factorize_blast(warm, 4, 4, 4, {.steps = 2, .device = Device::cuda});
  }
  Csv csv(csv_path);
  Summary summary;
  run_scaling(s, csv, summary);
  run_dft(s, csv, summary);
  if (!s.targets) run_budget(s, csv);
  summary.write(json, s.gpu ? device_name(0) : "cpu only");
  return 0;
}
