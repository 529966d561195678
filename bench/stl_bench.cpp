// bench/stl_bench: Strassen-Tile layers on the GPU in half/bfloat16 against dense cuBLAS,
// the grid (n = 4096, 8192, 16384 square layers with B = n signals, t = 4,
// r = 16 ... 49), all in one run on one GPU.
//
//   stl_bench [--sizes 4096,8192] [--ranks 16,32] [--dtypes half,bf16] [--reps 20]
//             [--layout col|row] [--batches 1,4,16] [--csv FILE] [--json FILE] [--tune]
//
// --tune prints, per layer, its time with tuning off and on in alternation (the colour GEMMs'
// algorithm measured: src/runtime/strided_gemm.hpp).
//
// Columns (milliseconds, medians after 3 warm-ups):
//   t_dense      cublasGemmEx, 16-bit in/out, fp32 accumulation (the baseline);
//   t_layer      one StrassenTile layer, our default path: encode kernel, the r colour GEMMs
//                as one strided-batched cuBLAS call (tensor cores), decode kernel;
//   t_chain_step one layer inside a chain of 4 (StrassenTileChain): its colour GEMMs plus the
//                fused decode-encode into the next layer, (t_chain4 - t_layer) / 3;
//   t_colours    the colour GEMMs alone (what a kernel fusing encode and decode into the GEMM
//                could reach at best);
//   t_bound      max(bytes of the layer path / copy bandwidth, flops / dense GEMM rate);
//   t_coding, t_coding_scalar, t_coding_shared  the encode and decode kernels alone, timed in
//                alternation: the default (tensor cores where stl_coding_mma_takes: ColMajor),
//                the scalar kernels with the coefficients as a kernel parameter, and with them
//                read from shared memory (the kernels before session 21); against
//                t_coding_bound = their bytes (X, Y, and the colours written and read) at the
//                copy bandwidth.
//
// With --batches (default 1,2,4,8,16,32: a few signals, where the weights are read once), a
// second CSV (the --csv name with "-small" before ".csv") has, per (n, r, dtype, B), timed in
// alternation: dense cuBLAS, the three-step path (StlPath::Steps), the fused kernel
// (StlPath::Fused: colour GEMMs and decode in one kernel after the encode; B <= 16) and Auto,
// with the bound of reading the encoded weights once at the copy bandwidth; and a chain of 4
// such layers on the steps and the fused path (the fused kernel mixing into the next layer).
// The weights are synthetic (r random colours of the rank-49 Strassen encoders and random
// encoded weights): the time does not depend on their values.
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "operators/stl/stl_kernels.hpp"  // stl_encode, stl_decode
#include "operators/stl/stl_steps.hpp"    // stl_fused_refusal
#include "strop/strop.hpp"

#if STROP_BENCH_HAVE_CUBLAS  // bench/CMakeLists.txt: CUDA builds
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

using namespace strop;

namespace {

struct Options {
  std::vector<Index> sizes = {4096, 8192, 16384};
  std::vector<Index> ranks = {16, 24, 32, 40, 48, 49};
  std::vector<std::string> dtypes = {"half", "bf16"};
  int reps = 20;
  std::string csv = "stl-bench.csv";
  std::string json = "stl-summary.json";
  Layout layout = Layout::ColMajor;  // of X and Y (the dense baseline is square: either way)
  std::vector<Index> batches = {1, 2, 4, 8, 16, 32};  // the small-batch rows
  bool tune = false;  // also time each layer with tuned GEMM algorithms (stdout only)
};

// Synthetic encoded weights in [-1, 1): a counter hash, filled in parallel (billions of them
// at n = 16384).
std::vector<float> synthetic_weights(Index count, unsigned seed) {
  std::vector<float> w(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < count; ++i) {
    unsigned long long x = (static_cast<unsigned long long>(i) + 1) * 0x9E3779B97F4A7C15ull + seed;
    x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    w[static_cast<std::size_t>(i)] = float(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
  return w;
}

#if STROP_BENCH_HAVE_CUBLAS
template <class Storage>
cudaDataType_t data_type() {
  return std::is_same_v<Storage, strop::half> ? CUDA_R_16F : CUDA_R_16BF;
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(detail::concat(what, ": cuBLAS status ", int(status)));
}

struct Row {
  Index n, r;
  std::string dtype;
  double t_dense, t_layer, t_chain_step, t_colours, t_bound;
  double t_coding, t_coding_scalar, t_coding_shared, t_coding_bound;
};

// A few signals: dense, the three steps, the fused kernel (NaN where it does not apply) and
// Auto, timed in alternation; the bound of reading the encoded weights once.
struct SmallRow {
  Index n, r, batch;
  std::string dtype;
  double t_dense, t_steps, t_fused, t_auto, t_bound;
  double t_chain_steps, t_chain_fused;  // a chain of 4 such layers
};

template <class Storage>
SmallRow run_small(const Options& opt, const StrassenTile<float>& layer, Index batch,
                   const std::string& dtype, double bandwidth, const Storage* w_dense,
                   Context& ctx) {
  const Index n = layer.rows();
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  const float one = 1, zero = 0;
  DeviceMatrix<Storage> x(n, batch, opt.layout, ctx), y(n, batch, opt.layout, ctx);
  fill_random_device(x.view(), 5, ctx);
  const StrassenTileChain<float> chain({layer, layer, layer, layer});
  auto with_path = [&](StlPath path, bool whole_chain = false) {
    return [&, path, whole_chain] {
      StlPathGuard guard(path);
      if (whole_chain)
        apply_reduced_precision<Storage>(chain, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f, ctx);
      else
        apply_reduced_precision<Storage>(layer, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f, ctx);
    };
  };
  const bool fused = !detail::stl_fused_refusal(
      detail::stl_steps(layer.encoders(), n, n, Op::NoTrans, batch), false);
  std::vector<std::function<void()>> works = {
      [&] {
        // Dense on ColMajor operands of the same shape (the layout does not matter here).
        check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(batch), int(n), &one,
                           w_dense, data_type<Storage>(), int(n), x.data(), data_type<Storage>(),
                           int(n), &zero, y.data(), data_type<Storage>(), int(n),
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "dense cublasGemmEx");
      },
      with_path(StlPath::Steps), with_path(StlPath::Auto), with_path(StlPath::Steps, true)};
  if (fused) {
    works.push_back(with_path(StlPath::Fused));
    works.push_back(with_path(StlPath::Fused, true));
  }
  const std::vector<double> t = median_device_seconds_each(ctx, works, opt.reps, 3);
  const double weight_bytes = 2.0 * double(layer.encoded_weight().size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SmallRow row{n,
               layer.rank(),
               batch,
               dtype,
               t[0],
               t[1],
               fused ? t[4] : nan,
               t[2],
               weight_bytes / bandwidth,
               t[3],
               fused ? t[5] : nan};
  std::printf(
      "%s n=%lld r=%lld B=%lld: dense %.1f us, steps %.1f us, fused %.1f us, auto %.1f us, "
      "weights-once bound %.1f us; chain of 4: steps %.1f us, fused %.1f us\n",
      dtype.c_str(), (long long)n, (long long)row.r, (long long)batch, 1e6 * row.t_dense,
      1e6 * row.t_steps, 1e6 * row.t_fused, 1e6 * row.t_auto, 1e6 * row.t_bound,
      1e6 * row.t_chain_steps, 1e6 * row.t_chain_fused);
  std::fflush(stdout);
  return row;
}

template <class Storage>
std::vector<Row> run(const Options& opt, Index n, const std::string& dtype, double bandwidth,
                     std::vector<SmallRow>& small, Context& ctx) {
  const Index batch = n, t = 4, tiles = n / t;
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  const float one = 1, zero = 0;
  DeviceMatrix<Storage> x(n, batch, opt.layout, ctx), y(n, batch, opt.layout, ctx);
  fill_random_device(x.view(), 1, ctx);
  double t_dense = 0;
  DeviceMatrix<Storage> w(n, n, Layout::ColMajor, ctx);
  fill_random_device(w.view(), 2, ctx);
  {
    const int ni = int(n);
    t_dense = median_device_seconds(
        ctx,
        [&] {
          check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, w.data(),
                             data_type<Storage>(), ni, x.data(), data_type<Storage>(), ni, &zero,
                             y.data(), data_type<Storage>(), ni, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT),
                "dense cublasGemmEx");
        },
        opt.reps, 3);
  }
  const double gemm_rate = 2.0 * double(n) * double(n) * double(batch) / t_dense;
  std::vector<Row> rows;
  std::mt19937 gen(7);
  for (Index r : opt.ranks) {
    const Index count = r * tiles * tiles;
    const StrassenTile<float> layer(stl::rank49_subset(r, gen), n, n,
                                    synthetic_weights(count, unsigned(r)));
    for (Index batch : opt.batches)
      small.push_back(run_small<Storage>(opt, layer, batch, dtype, bandwidth, w.data(), ctx));
    if (opt.tune) {
      // The layer with tuning off and on (its colour GEMMs' algorithm measured on the first
      // tuned call, src/runtime/strided_gemm.hpp), in alternation.
      const std::vector<double> t = bench::median_seconds_untuned_and_tuned(
          ctx,
          [&] {
            apply_reduced_precision<Storage>(layer, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f,
                                             ctx);
          },
          opt.reps);
      std::printf("# tuned layer: n %lld, r %lld, %s: untuned %.4f ms, tuned %.4f ms, %.3f\n",
                  (long long)n, (long long)r, dtype.c_str(), 1e3 * t[0], 1e3 * t[1], t[1] / t[0]);
    }
    const StrassenTileChain<float> chain({layer, layer, layer, layer});
    const double t_layer = median_device_seconds(
        ctx,
        [&] {
          apply_reduced_precision<Storage>(layer, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f, ctx);
        },
        opt.reps, 3);
    const double t_chain4 = median_device_seconds(
        ctx,
        [&] {
          apply_reduced_precision<Storage>(chain, Op::NoTrans, x.view(), y.view(), 1.0f, 0.0f, ctx);
        },
        opt.reps, 3);
    // The colour GEMMs alone, on buffers of the layer path's shapes.
    double t_colours = 0;
    {
      Buffer<Storage> a(r * tiles * tiles, MemorySpace::Device, ctx),
          b(r * tiles * tiles, MemorySpace::Device, ctx),
          c(r * tiles * tiles, MemorySpace::Device, ctx);
      fill_random_device(
          make_view(a.data(), r * tiles, tiles, Layout::ColMajor, MemorySpace::Device), 3, ctx);
      fill_random_device(
          make_view(b.data(), r * tiles, tiles, Layout::ColMajor, MemorySpace::Device), 4, ctx);
      const int m = int(tiles);
      const long long stride = (long long)tiles * tiles;
      t_colours = median_device_seconds(
          ctx,
          [&] {
            check(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, m, m, &one,
                                             a.data(), data_type<Storage>(), m, stride, b.data(),
                                             data_type<Storage>(), m, stride, &zero, c.data(),
                                             data_type<Storage>(), m, stride, int(r),
                                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  "colour cublasGemmStridedBatchedEx");
          },
          opt.reps, 3);
    }
    // Encode and decode alone on the layer path's buffers: the default kernels (tensor cores
    // where they apply), the scalar ones with the coefficients as a kernel parameter, and with
    // them read from shared memory.
    std::vector<double> t_coding(3);
    {
      const detail::StlColourLayout pairs{tiles, tiles, opt.layout == Layout::RowMajor};
      Buffer<Storage> colours(r * pairs.pairs(), MemorySpace::Device, ctx);
      const std::vector<float> coefficients = synthetic_weights(r * 16, 9);
      Buffer<float> device(r * 16, MemorySpace::Device, ctx);
      detail::copy_bytes(device.data(), MemorySpace::Device, coefficients.data(), MemorySpace::Host,
                         sizeof(float) * coefficients.size(), ctx);
      auto coding = [&](const float* host, bool tensor_cores) {
        return [&, host, tensor_cores] {
          detail::stl_encode<Storage>(t, r, device.data(), host, x.view(), colours.data(), pairs,
                                      ctx, tensor_cores);
          detail::stl_decode<Storage>(t, r, device.data(), host, colours.data(), pairs, y.view(),
                                      1.0f, 0.0f, ctx, tensor_cores);
        };
      };
      t_coding =
          median_device_seconds_each(ctx,
                                     {coding(coefficients.data(), true),
                                      coding(coefficients.data(), false), coding(nullptr, false)},
                                     opt.reps, 3);
    }
    // Bytes of the layer path: X, Y; encoded X̂ and colours Ŷ (r/t^2 |X| each) written and
    // read; the encoded weights once.
    const double elems = double(n) * double(batch), colour_elems = double(r) * tiles * tiles;
    const double bytes = 2.0 * (2 * elems + 2 * colour_elems + 2 * colour_elems + colour_elems);
    const double flops = 2.0 * double(r) * double(tiles) * double(tiles) * double(tiles);
    const double t_bound = std::max(bytes / bandwidth, flops / gemm_rate);
    const double coding_bytes = 2.0 * (2 * elems + 2 * colour_elems);
    rows.push_back({n, r, dtype, t_dense, t_layer, (t_chain4 - t_layer) / 3, t_colours, t_bound,
                    t_coding[0], t_coding[1], t_coding[2], coding_bytes / bandwidth});
    const Row& row = rows.back();
    std::printf(
        "%s n=%lld r=%lld: dense %.3f ms, layer %.3f ms (%.2fx), chain step %.3f ms (%.2fx), "
        "colour GEMMs %.3f ms (%.2fx), bound %.3f ms\n",
        dtype.c_str(), (long long)n, (long long)r, 1e3 * t_dense, 1e3 * row.t_layer,
        t_dense / row.t_layer, 1e3 * row.t_chain_step, t_dense / row.t_chain_step, 1e3 * t_colours,
        t_dense / t_colours, 1e3 * t_bound);
    std::printf(
        "   encode + decode %.3f ms (scalar kernels %.3f ms, with coefficients in shared memory "
        "%.3f ms; bound %.3f ms)\n",
        1e3 * row.t_coding, 1e3 * row.t_coding_scalar, 1e3 * row.t_coding_shared,
        1e3 * row.t_coding_bound);
    std::fflush(stdout);
  }
  return rows;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (bench::read_common_flag(arg, next, opt)) continue;
    if (arg == "--sizes") {
      opt.sizes = bench::index_list(next());
    } else if (arg == "--ranks") {
      opt.ranks = bench::index_list(next());
    } else if (arg == "--dtypes") {
      opt.dtypes = bench::split_list(next());
    } else if (arg == "--layout") {
      opt.layout = next() == "row" ? Layout::RowMajor : Layout::ColMajor;
    } else if (arg == "--batches") {
      opt.batches = bench::index_list(next());
    } else if (arg == "--tune") {
      opt.tune = true;
    } else {
      std::fprintf(stderr, "stl_bench: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
#if STROP_BENCH_HAVE_CUBLAS
  if (!cuda_available()) {
    std::printf("stl_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  const double bandwidth = measure_copy_bandwidth(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s\n", device_name(0), bandwidth * 1e-9);
  std::vector<Row> rows;
  std::vector<SmallRow> small;
  for (Index n : opt.sizes) {
    for (const std::string& dtype : opt.dtypes) {
      const auto part = dtype == "half"
                            ? run<strop::half>(opt, n, dtype, bandwidth, small, ctx)
                            : run<strop::bfloat16>(opt, n, dtype, bandwidth, small, ctx);
      rows.insert(rows.end(), part.begin(), part.end());
    }
  }
  // The small-batch rows, and the fused kernel's speedup over the steps where Auto takes it.
  std::map<std::string, double> fused_kernel_over_steps;
  if (!small.empty()) {
    const std::string small_csv = opt.csv.substr(0, opt.csv.rfind(".csv")) + "-small.csv";
    std::ofstream out(small_csv);
    out << "# device=" << device_name(0) << " copy_bandwidth_Bps=" << bandwidth
        << " reps=" << opt.reps << " t=4 layout=" << to_string(opt.layout) << "\n";
    out << "n,r,dtype,batch,t_dense,t_steps,t_fused,t_auto,t_bound,fused_over_steps,"
           "auto_over_steps,auto_speedup_over_dense,auto_over_bound,t_chain4_steps,"
           "t_chain4_fused,chain4_fused_over_steps\n";
    for (const SmallRow& r : small) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%lld,%lld,%s,%lld,%.6e,%.6e,%.6e,%.6e,%.6e,%.3f,%.3f,%.3f,%.3f,%.6e,%.6e,"
                    "%.3f\n",
                    (long long)r.n, (long long)r.r, r.dtype.c_str(), (long long)r.batch, r.t_dense,
                    r.t_steps, r.t_fused, r.t_auto, r.t_bound, r.t_steps / r.t_fused,
                    r.t_steps / r.t_auto, r.t_dense / r.t_auto, r.t_auto / r.t_bound,
                    r.t_chain_steps, r.t_chain_fused, r.t_chain_steps / r.t_chain_fused);
      out << line;
      if (r.dtype == "half" && r.t_fused == r.t_fused) {
        char key[96];
        std::snprintf(key, sizeof key, "n=%lld,r=%lld,B=%lld", (long long)r.n, (long long)r.r,
                      (long long)r.batch);
        fused_kernel_over_steps[key] = r.t_steps / r.t_fused;
      }
    }
    std::printf("wrote %s\n", small_csv.c_str());
  }
  std::ofstream csv(opt.csv);
  csv << "# device=" << device_name(0) << " copy_bandwidth_Bps=" << bandwidth
      << " reps=" << opt.reps << " t=4 batch=n layout=" << to_string(opt.layout) << "\n";
  csv << "n,r,dtype,t_dense,t_layer,t_chain_step,t_colours,t_bound,layer_speedup,"
         "chain_step_speedup,colours_speedup,layer_over_bound,t_coding,t_coding_scalar,"
         "t_coding_shared,t_coding_bound\n";
  std::map<std::string, double> layer_speedup, chain_speedup, fused_over_unfused;
  for (const Row& r : rows) {
    char line[640];
    std::snprintf(line, sizeof line,
                  "%lld,%lld,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.3f,%.3f,%.3f,%.3f,%.6e,%.6e,%.6e,%.6e\n",
                  (long long)r.n, (long long)r.r, r.dtype.c_str(), r.t_dense, r.t_layer,
                  r.t_chain_step, r.t_colours, r.t_bound, r.t_dense / r.t_layer,
                  r.t_dense / r.t_chain_step, r.t_dense / r.t_colours, r.t_layer / r.t_bound,
                  r.t_coding, r.t_coding_scalar, r.t_coding_shared, r.t_coding_bound);
    csv << line;
    if (r.dtype == "half") {
      const std::string key = "n=" + std::to_string(r.n) + ",r=" + std::to_string(r.r);
      layer_speedup[key] = r.t_dense / r.t_layer;
      chain_speedup[key] = r.t_dense / r.t_chain_step;
      fused_over_unfused[key] = r.t_layer / r.t_chain_step;
    }
  }
  auto dict = [](const std::map<std::string, double>& m) {
    std::string out = "{";
    for (const auto& [k, v] : m)
      out += (out.size() > 1 ? ", \"" : "\"") + k + "\": " + std::to_string(v);
    return out + "}";
  };
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0)
       << "\", \"dtype\": \"half\", \"copy_bandwidth_GBps\": " << bandwidth * 1e-9
       << ",\n \"speedup_over_dense\": " << dict(layer_speedup)
       << ",\n \"speedup_over_dense_chained\": " << dict(chain_speedup)
       << ",\n \"fused_over_unfused\": " << dict(fused_over_unfused)
       << ",\n \"fused_kernel_over_steps\": " << dict(fused_kernel_over_steps);
  // Flat keys for the README's table (scripts/perf_table.py) at the target shapes.
  // (snprintf rather than string concatenation: GCC 12's -Wrestrict misfires on the latter.)
  for (const long long n : {8192LL, 16384LL}) {
    char key[64], flat[64];
    std::snprintf(key, sizeof key, "n=%lld,r=32", n);
    std::snprintf(flat, sizeof flat, "n%lld_r32", n);
    if (layer_speedup.count(key)) {
      json << ",\n \"half_layer_speedup_" << flat << "\": " << layer_speedup[key]
           << ", \"half_chain_step_speedup_" << flat << "\": " << chain_speedup[key];
    }
  }
  json << ",\n \"notes\": \"speedup_over_dense: one layer, default path (encode, strided-batched "
          "colour GEMMs, decode); speedup_over_dense_chained: one layer inside a 4-layer chain "
          "(colour GEMMs + fused decode-encode); fused_over_unfused: that chained step against "
          "the unfused layer; fused_kernel_over_steps: the one-kernel colour GEMMs + decode "
          "(StlPath::Fused) "
          "against the three steps, a few signals (B)\"}\n";
  std::printf("wrote %s and %s\n", opt.csv.c_str(), opt.json.c_str());
#else
  std::printf("stl_bench: built without cuBLAS, nothing to measure\n");
#endif
  return 0;
}
