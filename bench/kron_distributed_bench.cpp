// bench/kron_distributed_bench: DistributedKron (the features of every signal split over G
// parts) against the Kron-matmul engine on the whole matrix, on FastKron's Table 1 shapes
// (8^6, 16^5, 32^4, 64^3, M signals), float and double, G = 2 and 4.
//
//   kron_distributed_bench [--reps R] [--csv FILE] [--batch M] [--parts 2,4] [--devices D]
//
// The parts run on D devices in turn (default: every visible device, at most G). On one GPU
// the parts share it, so the row measures what the split costs on top of the same
// arithmetic (the exchanges, smaller local passes), not multi-GPU scaling. Every row: shape,
// M, dtype, G, devices, the exchanges (steps) of the plan, the median time (CUDA events on
// part 0's stream, R runs after 3 warm-ups) of the whole-matrix engine call (one context) and
// of the split call, one exchange of the first step over all parts on one stream, and a
// cudaMemcpy of X's bytes timed in alternation with it (an exchange reads and writes each
// element once, as the copy does; each part's block copied in turn).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "bench_support.hpp"
#include "operators/kron/kron_exchange.hpp"
#include "strop/operators/kron_distributed.hpp"
#include "strop/strop.hpp"

using namespace strop;

namespace {

struct Options {
  int reps = 10;
  Index batch = 1024;
  std::vector<Index> parts = {2, 4};
  int devices = 0;  // 0: every visible device
  std::string csv = "kron-distributed-bench.csv";
  std::string json;  // unused (read_common_flag's contract)
};

template <class T>
void run_case(Index P, int n, Index parts, const Options& opt, std::ofstream& csv) {
  const char* dtype = std::is_same_v<T, float> ? "float" : "double";
  std::vector<AnyOperator<T>> factors;
  for (int f = 0; f < n; ++f)
    factors.emplace_back(Dense<T>(HostMatrix<T>::Random(P, P)));
  const Kron<T> A(factors);
  const DistributedKron<T> split(A, static_cast<int>(parts));
  const Index K = A.rows(), M = opt.batch, rows = K / parts;
  const int devices = std::min<int>(opt.devices > 0 ? opt.devices : device_count(), parts);

  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Context*> pointers;
  for (Index p = 0; p < parts; ++p) {
    contexts.push_back(std::make_unique<Context>(static_cast<int>(p % devices)));
    pointers.push_back(contexts.back().get());
  }
  Context& ctx = *pointers[0];
  std::vector<DeviceMatrix<T>> xs, ys;
  std::vector<ConstView<T>> xv;
  std::vector<MatrixView<T>> yv;
  for (Index p = 0; p < parts; ++p) {
    xs.emplace_back(rows, M, Layout::ColMajor, *pointers[p]);
    ys.emplace_back(rows, M, Layout::ColMajor, *pointers[p]);
    fill_random_device(xs.back().view(), 7 + p, *pointers[p]);
  }
  for (Index p = 0; p < parts; ++p) {
    xv.push_back(xs[p].view());
    yv.push_back(ys[p].view());
  }
  const auto steps = split.steps();

  // The whole matrix on part 0's device, through the engine.
  double t_whole = 0;
  {
    DeviceMatrix<T> x(K, M, Layout::ColMajor, ctx), y(K, M, Layout::ColMajor, ctx);
    fill_random_device(x.view(), 3, ctx);
    t_whole = median_device_seconds_each(
        ctx, {[&] { A.apply(Op::NoTrans, x.view(), y.view(), T(1), T(0), ctx); }}, opt.reps, 3)[0];
  }
  const double t_split = median_device_seconds_each(
      ctx, {[&] { split.apply(Op::NoTrans, xv, yv, pointers, T(1), T(0)); }}, opt.reps, 3)[0];

  // One exchange of the first step, every part's pull on part 0's stream (single device only:
  // the sources must be readable there without the split's peer setup).
  double t_exchange = 0, t_copy = 0;
#if STROP_HAVE_CUDA
  if (devices == 1) {
    detail::KronPartSources<T> sources;
    sources.parts = static_cast<int>(parts);
    sources.row_stride = 1;
    sources.col_stride = rows;
    for (Index p = 0; p < parts; ++p)
      sources.part_data[p] = xs[p].view().data;
    const detail::KronRotation rotation{rows, steps[0].out, K / steps[0].out};
    DeviceMatrix<T> copy(K, M, Layout::ColMajor, ctx);
    const auto times = median_device_seconds_each(
        ctx,
        {[&] {
           for (Index p = 0; p < parts; ++p)
             detail::kron_rotation_pull_device(rotation, static_cast<int>(p), sources, yv[p], ctx);
         },
         [&] {
           for (Index p = 0; p < parts; ++p)
             detail::copy_bytes(copy.view().data + p * rows * M, MemorySpace::Device,
                                xs[p].view().data, MemorySpace::Device,
                                sizeof(T) * std::size_t(rows * M), ctx);
         }},
        opt.reps, 3);
    t_exchange = times[0];
    t_copy = times[1];
  }
#endif
  char line[512];
  std::snprintf(line, sizeof line, "%lld^%d,%lld,%s,%lld,%d,%zu,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f",
                static_cast<long long>(P), n, static_cast<long long>(M), dtype,
                static_cast<long long>(parts), devices, steps.size(), t_whole * 1e3, t_split * 1e3,
                t_exchange * 1e3, t_copy * 1e3, t_copy > 0 ? t_exchange / t_copy : 0.0,
                t_split / t_whole);
  std::printf("%s\n", line);
  std::fflush(stdout);
  csv << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      require<ShapeError>(i + 1 < argc, flag, " needs a value");
      return argv[++i];
    };
    if (bench::read_common_flag(flag, value, opt)) continue;
    if (flag == "--batch") {
      opt.batch = std::stoll(value());
    } else if (flag == "--parts") {
      opt.parts = bench::index_list(value());
    } else if (flag == "--devices") {
      opt.devices = std::stoi(value());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (!cuda_available()) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " devices=" << device_count() << "\n";
  const char* header =
      "shape,M,dtype,parts,devices,steps,t_whole_ms,t_split_ms,t_exchange_ms,t_copy_ms,"
      "exchange_over_copy,split_over_whole";
  csv << header << "\n";
  std::printf("%s\n", header);
  const std::pair<Index, int> shapes[] = {{8, 6}, {16, 5}, {32, 4}, {64, 3}};
  for (Index parts : opt.parts) {
    for (auto [P, n] : shapes) {
      run_case<float>(P, n, parts, opt, csv);
      run_case<double>(P, n, parts, opt, csv);
    }
  }
  return 0;
}
