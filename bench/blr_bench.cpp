// bench/blr_bench: block low-rank layers on the GPU, the layer shapes of the BLR paper's
// Table 3 (Llama-7B, Llama-3.2-1B, GPT2-S, ViT-B, DiT-XL/2 with their (r, b)), against dense
// cuBLAS on the equivalent dense matrix and the memory-traffic bound measured in the same run.
//
//   blr_bench [--reps R] [--csv FILE] [--csv16 FILE] [--json FILE] [--batches 1,16,...]
//             [--ks-algorithm NAME] [--layer MODEL/NAME] [--graph | --enqueue | --cold]
//             [--tune] [--float-paths] [--token-groups 2,4,...]
//
// Each row's times are medians of calls timed one by one between events (host enqueue
// included), or, with --graph, of replays of a CUDA graph of 10 calls: the GPU's time, as a
// caller that captures its calls sees it (bench_support.hpp; a "nan" time: not capturable),
// or, with --enqueue, of the host's time to return from a call made on an idle device (what
// each call adds before its first kernel can start; the bound columns then do not apply).
// --cold times calls one by one like the default, each after the L2 cache was evicted: the
// weights come from DRAM, as the bound assumes and as in a decode step over a whole model.
// Without it, repeated calls of a layer find its weights in the 50 MB L2: replayed on an H100,
// dense Llama-7B qkvo read its 33.5 MB of weights in 9.1 us, 3.7 TB/s, above HBM3's 3.35.
//
// "ours" is what strop runs today: each operator's Kronecker-sparse form (LowRank: two
// GEMMs; Monarch: a batched GEMM, the shuffle as a row gather, a batched GEMM; BLAST: the
// three stages U, diag(s), V) through the KS kernels and cuBLAS: the unfused design. fp32,
// signals contiguous (PyTorch's (B, features) row-major = our ColMajor). The bound counts
// the weights, one read of X, one write of Y and one write and read of each intermediate.
//
// Rows monarch_plan / blast_plan time the permutation-free GEMM plans
// (operators/blr/blr_gemm_plan.hpp) in fp32, rows monarch_unfused / blast_unfused the unfused
// baselines (bmm + permute, blr_unfused_apply_device) in fp32. The second CSV (--csv16) has the
// same layers in bfloat16: the plans on tensor cores (apply_reduced_precision) and the unfused
// baselines (bmm + permute, blr_unfused_apply_device) against a dense bf16 cublasGemmEx and the
// 2-byte memory bound; --json writes blr-summary.json from it ("fused" = the plans; medians over
// the layers at B = 1024). Rows blast_plan_folded (from 16 tokens) time BLAST's folded plan
// (blast_folded_plan: two GEMMs, no coupling stage), which Auto takes where blast_folds says.
//
// --float-paths adds fp32 rows for the float operators' choice between the KS form (the public
// path's fallback) and the GEMM plan beyond A on signal-contiguous views: monarch_t /
// monarch_t_plan (A^T, signals contiguous) and monarch_rm / monarch_rm_plan (A, batch
// contiguous: RowMajor), the same for blast. The public path is forced to the KS form there by
// its rule (float_plan_preferred), so those rows time the KS form.
//
// --token-groups G,... adds bf16 rows monarch_plan_groupsG and blast_plan_groupsG (from 256
// tokens): Auto's plan applied to G groups of consecutive tokens one after another, so that
// each group's intermediates (a quarter of the layer's at G = 4) can stay in the L2 cache
// between the stage that writes them and the one that reads them, the workspace reused.
//
// --tune adds rows *_plan_cublas_tuned and dense_tuned to the bf16 CSV: the cuBLAS plan and the
// dense GEMM with each product's algorithm tuned by measurement (src/runtime/strided_gemm.hpp,
// cuBLAS's default against cuBLASLt's proposals), timed in alternation with the untuned call.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "blr_layers.hpp"
#include "strop/strop.hpp"
#if STROP_BENCH_HAVE_CUBLAS  // bench/CMakeLists.txt: CUDA builds
#include <cublas_v2.h>

#include "operators/blr/blr_gemm_device.hpp"
#include "operators/blr/blr_gemm_plan.hpp"
#include "operators/blr/blr_plan_kernels.hpp"
#include "operators/blr/blr_skinny_kernel.hpp"
#include "src/runtime/strided_gemm.hpp"
#endif

using namespace strop;

namespace {

struct Options {
  int reps = 20;
  std::string csv = "blr-bench.csv";
  std::string csv16 = "blr-bench-bf16.csv";
  std::string json = "blr-summary.json";
  std::vector<Index> batches = {1, 16, 128, 1024, 4096};
  KSAlgorithm ks_algorithm = KSAlgorithm::Auto;
  std::string layer;         // only layers whose "model/name" contains this (profiling)
  bool tune = false;         // also time the cuBLAS plans and dense with tuned GEMM algorithms
  bool float_paths = false;  // fp32 rows for A^T and batch-contiguous signals
  std::vector<Index> token_groups;  // --token-groups: Auto on this many token groups in turn
};

#if STROP_BENCH_HAVE_CUBLAS
// With --enqueue: what the pieces of a call cost the host, each on an idle device (medians of
// `reps`), as comment lines of `out` and stdout; the sums behind the per-call rows.
void print_enqueue_costs(Context& ctx, int reps, std::ofstream& out) {
  auto stream = static_cast<cudaStream_t>(ctx.stream());
  auto handle = static_cast<cublasHandle_t>(ctx.cublas());
  DeviceMatrix<bfloat16> a(64, 64, Layout::ColMajor, ctx), b(64, 64, Layout::ColMajor, ctx),
      c(64, 64, Layout::ColMajor, ctx);
  Buffer<void*> pointers(3, MemorySpace::Device, ctx);
  const std::vector<void*> host_pointers{a.view().data, b.view().data, c.view().data};
  detail::copy_bytes(pointers.data(), MemorySpace::Device, host_pointers.data(), MemorySpace::Host,
                     sizeof(void*) * 3, ctx);
  const float one = 1, zero = 0;
  auto check = [](cublasStatus_t s) {
    if (s != CUBLAS_STATUS_SUCCESS) throw DeviceError("blr_bench: GEMM in the cost table");
  };
  detail::StridedCopy copy{};  // one element: the cost of launching one of our kernels
  copy.src = a.view().data, copy.dst = c.view().data;
  for (int d = 0; d < 4; ++d)
    copy.dims[d] = 1;
  copy.alpha = 1;
  const std::vector<std::pair<const char*, std::function<void()>>> items = {
      {"Context::stream()", [&] { ctx.stream(); }},
      {"cudaGetDeviceCount",
       [&] {
         int n = 0;
         cudaGetDeviceCount(&n);
       }},
      {"cudaSetDevice", [&] { cudaSetDevice(ctx.device()); }},
      {"cudaStreamIsCapturing",
       [&] {
         cudaStreamCaptureStatus st;
         cudaStreamIsCapturing(stream, &st);
       }},
      {"Buffer 1 MB alloc + free", [&] { Buffer<char> buf(1 << 20, MemorySpace::Device, ctx); }},
      {"our kernel launch (strided_copy)", [&] { detail::strided_copy<bfloat16>(copy, ctx); }},
      {"cublasGemmEx bf16 64^3",
       [&] {
         check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a.view().data,
                            CUDA_R_16BF, 64, b.view().data, CUDA_R_16BF, 64, &zero, c.view().data,
                            CUDA_R_16BF, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
       }},
      {"cublasGemmStridedBatchedEx bf16 64^3 x1",
       [&] {
         check(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one,
                                          a.view().data, CUDA_R_16BF, 64, 0, b.view().data,
                                          CUDA_R_16BF, 64, 0, &zero, c.view().data, CUDA_R_16BF, 64,
                                          0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
       }},
      {"cublasGemmBatchedEx bf16 64^3 x1",
       [&] {
         void** p = pointers.data();
         check(cublasGemmBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, p,
                                   CUDA_R_16BF, 64, p + 1, CUDA_R_16BF, 64, &zero, p + 2,
                                   CUDA_R_16BF, 64, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
       }},
  };
  std::vector<std::function<void()>> works;
  for (const auto& item : items)
    works.push_back(item.second);
  const std::vector<double> t = median_enqueue_seconds_each(ctx, works, reps);
  for (std::size_t i = 0; i < items.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "# enqueue cost: %s: %.2f us\n", items[i].first, t[i] * 1e6);
    out << line;
    std::fputs(line, stdout);
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (bench::read_common_flag(arg, next, opt)) continue;
    if (arg == "--csv16") {
      opt.csv16 = next();
    } else if (arg == "--ks-algorithm") {
      // Forces the KS algorithm of Monarch's and BLAST's factors (auto, fused, strided_gemm,
      // bmm, small_batch), to compare paths in one run.
      const std::string name = next();
      for (KSAlgorithm a : {KSAlgorithm::Auto, KSAlgorithm::Fused, KSAlgorithm::StridedGemm,
                            KSAlgorithm::Bmm, KSAlgorithm::SmallBatch})
        if (to_string(a) == name) opt.ks_algorithm = a;
    } else if (arg == "--batches") {
      opt.batches = bench::index_list(next());
    } else if (arg == "--layer") {
      opt.layer = next();
    } else if (arg == "--tune") {
      opt.tune = true;
    } else if (arg == "--float-paths") {
      opt.float_paths = true;
    } else if (arg == "--token-groups") {
      opt.token_groups = bench::index_list(next());
    } else if (arg == "--graph") {
      bench::timing() = bench::Timing::Graph;
    } else if (arg == "--enqueue") {
      bench::timing() = bench::Timing::Enqueue;
    } else if (arg == "--cold") {
      bench::timing() = bench::Timing::Cold;
    }
  }
  if (!cuda_available()) {
    std::printf("blr_bench: no CUDA device visible, nothing to measure\n");
    return 0;
  }
  Context& ctx = default_context();
  const KSAlgorithmGuard ks_guard(opt.ks_algorithm);
  const double bandwidth = measure_copy_bandwidth(ctx);
  std::printf("# device %s, copy bandwidth %.0f GB/s\n", device_name(0), bandwidth * 1e-9);
  std::ofstream csv(opt.csv);
  const char* timing = bench::timing_name();
  csv << "# device=" << device_name(0) << " bandwidth_Bps=" << bandwidth << " timing=" << timing
      << "\n";
  csv << "model,layer,in,out,structure,r,b,batch,t_ours,t_dense,t_bound,dense_over_ours,"
         "ours_over_bound\n";
  std::ofstream csv16(opt.csv16);
  csv16 << "# device=" << device_name(0) << " bandwidth_Bps=" << bandwidth << " timing=" << timing
        << "\n";
  csv16 << "model,layer,in,out,structure,r,b,batch,t_plan,t_dense,t_bound,dense_over_plan,"
           "plan_over_bound\n";
#if STROP_BENCH_HAVE_CUBLAS
  if (bench::timing() == bench::Timing::Enqueue) print_enqueue_costs(ctx, 4 * opt.reps, csv16);
#endif
  // Issue #9's summary keys, from the bf16 rows.
  double llama_b1024_min_speedup = 1e300, llama_b1_min_speedup = 1e300, b1_max_over_bound = 0;
  std::vector<double> monarch_speedups, blast_speedups;  // unfused / plan time at B = 1024
  std::vector<double> decode_speedups_b1;  // cuBLAS plan / decode kernel time at B = 1
  std::vector<double> skinny_speedups_b1;  // cuBLAS plan / skinny path time at B = 1
  std::mt19937 gen(1);
  for (const bench::BlrLayer& l : bench::kBlrLayers) {
    if (!opt.layer.empty() && (l.model + "/" + l.name).find(opt.layer) == std::string::npos)
      continue;
    const Dense<float> dense(HostMatrix<float>::Random(l.out, l.in));
    const auto lowrank = LowRank<float>::random(l.out, l.in, l.lowrank_r, gen);
    const Index mb = std::max<Index>(l.monarch_b, 1), per_block = l.monarch_rank_per_block();
    const std::optional<Monarch<float>> monarch =
        l.monarch_b > 0 ? std::optional(Monarch<float>::random(l.out, l.in, mb, mb, per_block, gen))
                        : std::nullopt;
    const auto blast = Blast<float>::random(l.out, l.in, l.blast_b, l.blast_b, l.blast_r, gen);
    for (Index batch : opt.batches) {
      const double t_dense =
          bench::time_apply_device<float>(dense, batch, Layout::ColMajor, opt.reps, ctx);
      // One CSV row; the bound moves the params once and `per_token` values for each token
      // (bytes per value 4 (fp32) or 2 (bf16)).
      auto write_bound_row = [&](std::ofstream& out, double value_bytes, double t_base,
                                 const char* structure, Index r, Index b, Index params,
                                 Index per_token, double t) {
        const double bytes = value_bytes * (double(params) + double(batch) * double(per_token));
        const double bound = bytes / bandwidth;
        char line[512];
        std::snprintf(
            line, sizeof line, "%s,%s,%lld,%lld,%s,%lld,%lld,%lld,%.6e,%.6e,%.6e,%.3f,%.3f\n",
            l.model.c_str(), l.name.c_str(), (long long)l.in, (long long)l.out, structure,
            (long long)r, (long long)b, (long long)batch, t, t_base, bound, t_base / t, t / bound);
        out << line;
        std::fputs(line, stdout);
        return bound;
      };
      // A layer's row: X read and Y written once, `intermediate` rows of temporaries between
      // the stages each written and read once.
      auto write_row = [&](std::ofstream& out, double value_bytes, double t_base,
                           const char* structure, Index r, Index b, Index params,
                           Index intermediate, double t) {
        return write_bound_row(out, value_bytes, t_base, structure, r, b, params,
                               l.in + l.out + 2 * intermediate, t);
      };
      auto row = [&](const char* structure, Index r, Index b, Index params, Index intermediate,
                     double t) {
        write_row(csv, 4.0, t_dense, structure, r, b, params, intermediate, t);
      };
      row("lowrank", l.lowrank_r, 1, lowrank.parameter_count(), l.lowrank_r,
          bench::time_apply_device<float>(lowrank, batch, Layout::ColMajor, opt.reps, ctx));
      if (monarch) {
        row("monarch", l.monarch_r, mb, monarch->parameter_count(), 2 * mb * mb * per_block,
            bench::time_apply_device<float>(*monarch, batch, Layout::ColMajor, opt.reps, ctx));
      }
      row("blast", l.blast_r, l.blast_b, blast.parameter_count(), 2 * l.blast_b * l.blast_r,
          bench::time_apply_device<float>(blast, batch, Layout::ColMajor, opt.reps, ctx));
#if STROP_BENCH_HAVE_CUBLAS
      // The GEMM plans: fp32 rows here, bf16 rows in csv16.
      auto time_plan = [&](const auto& A) {
        return bench::time_device_call<float>(
            A.cols(), A.rows(), batch, Layout::ColMajor, opt.reps, ctx, [&](auto x, auto y) {
              detail::blr_plan_apply_device<float>(A, Op::NoTrans, x, y, 1, 0, ctx);
            });
      };
      // The unfused baseline (bmm + permute) on float or bfloat16 signals (`storage`'s type).
      // The public path and the plan for A^T on contiguous signals and for A on batch-contiguous
      // ones (--float-paths): rows NAME_t, NAME_t_plan, NAME_rm, NAME_rm_plan.
      auto float_path_rows = [&](const auto& A, const std::string& name, Index r, Index b,
                                 Index params, Index intermediate) {
        if (!opt.float_paths) return;
        for (const auto& [op, layout, suffix] :
             {std::tuple{Op::Trans, Layout::ColMajor, "_t"},
              std::tuple{Op::NoTrans, Layout::RowMajor, "_rm"}}) {
          const Index in = op == Op::NoTrans ? A.cols() : A.rows();
          const Index out = op == Op::NoTrans ? A.rows() : A.cols();
          for (bool plan : {false, true}) {
            const double t = bench::time_device_call<float>(
                in, out, batch, layout, opt.reps, ctx, [&](auto x, auto y) {
                  if (plan) {
                    detail::blr_plan_apply_device<float>(A, op, x, y, 1, 0, ctx);
                  } else {
                    A.apply(op, x, y, 1.0f, 0.0f, ctx);
                  }
                });
            row((name + suffix + (plan ? "_plan" : "")).c_str(), r, b, params, intermediate, t);
          }
        }
      };
      auto time_unfused = [&](auto storage, const auto& A) {
        using S = decltype(storage);
        return bench::time_device_call<S>(
            A.cols(), A.rows(), batch, Layout::ColMajor, opt.reps, ctx,
            [&](auto x, auto y) { detail::blr_unfused_apply_device<S>(A, x, y, 1.0f, 0.0f, ctx); });
      };
      auto time_bf16 = [&](const auto& A) {
        return bench::time_device_call<bfloat16>(
            A.cols(), A.rows(), batch, Layout::ColMajor, opt.reps, ctx,
            [&](auto x, auto y) { apply_reduced_precision<bfloat16>(A, Op::NoTrans, x, y); });
      };
      // Auto's bf16 plan on `groups` groups of consecutive tokens, one after another.
      auto time_bf16_groups = [&](const auto& A, Index groups) {
        return bench::time_device_call<bfloat16>(
            A.cols(), A.rows(), batch, Layout::ColMajor, opt.reps, ctx, [&](auto x, auto y) {
              const Index per = (batch / groups + 7) / 8 * 8;
              for (Index t0 = 0; t0 < batch; t0 += per) {
                const Index n = std::min(per, batch - t0);
                apply_reduced_precision<bfloat16>(A, Op::NoTrans, x.col_block(t0, n),
                                                  y.col_block(t0, n));
              }
            });
      };
      // Dense bf16: Y (out x B) = W (out x in) X, 16-bit in and out, fp32 accumulation.
      DeviceMatrix<bfloat16> wd(l.out, l.in, Layout::ColMajor, ctx),
          xd(l.in, batch, Layout::ColMajor, ctx), yd(l.out, batch, Layout::ColMajor, ctx);
      fill_random_device(wd.view(), 3, ctx);
      fill_random_device(xd.view(), 5, ctx);
      const float one = 1, zero = 0;
      const double t_dense16 = bench::median_seconds_each(
          ctx, {[&] {
            const cublasStatus_t status = cublasGemmEx(
                static_cast<cublasHandle_t>(ctx.cublas()), CUBLAS_OP_N, CUBLAS_OP_N, int(l.out),
                int(batch), int(l.in), &one, wd.view().data, CUDA_R_16BF, int(l.out),
                xd.view().data, CUDA_R_16BF, int(l.in), &zero, yd.view().data, CUDA_R_16BF,
                int(l.out), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            if (status != CUBLAS_STATUS_SUCCESS) throw DeviceError("blr_bench: dense bf16 GEMM");
          }},
          opt.reps)[0];
      // call(X, Y) on bf16 signals with tuning off and on, in alternation: {untuned, tuned}.
      auto time_tuned_and_not = [&](Index in, Index out, auto call) {
        DeviceMatrix<bfloat16> x(in, batch, Layout::ColMajor, ctx),
            y(out, batch, Layout::ColMajor, ctx);
        fill_random_device(x.view(), 5, ctx);
        return bench::median_seconds_untuned_and_tuned(
            ctx, [&] { call(ConstView<bfloat16>(x.view()), y.view()); }, opt.reps);
      };
      auto row16_raw = [&](const char* structure, Index r, Index b, Index params,
                           Index intermediate, double t) {
        return write_row(csv16, 2.0, t_dense16, structure, r, b, params, intermediate, t);
      };
      auto row16 = [&](const char* structure, Index r, Index b, Index params, Index intermediate,
                       double t) {
        const double bound = row16_raw(structure, r, b, params, intermediate, t);
        // The summary's keys are about our BLAST and Monarch plans, not the baselines.
        const std::string kind = structure;
        if (kind != "blast_plan" && kind != "monarch_plan") return;
        if (l.model == "Llama-7B" && batch == 1024)
          llama_b1024_min_speedup = std::min(llama_b1024_min_speedup, t_dense16 / t);
        if (l.model == "Llama-7B" && batch == 1)
          llama_b1_min_speedup = std::min(llama_b1_min_speedup, t_dense16 / t);
        if (batch == 1) b1_max_over_bound = std::max(b1_max_over_bound, t / bound);
      };
      auto group_rows = [&](const auto& A, const std::string& name, Index r, Index b, Index params,
                            Index intermediate) {
        if (batch < 256) return;
        for (Index g : opt.token_groups)
          row16_raw((name + "_plan_groups" + std::to_string(g)).c_str(), r, b, params, intermediate,
                    time_bf16_groups(A, g));
      };
      // One explicit path of A's plan.
      auto time_plan_path = [&](const auto& A, detail::PlanPath path) {
        return bench::time_device_call<bfloat16>(
            A.cols(), A.rows(), batch, Layout::ColMajor, opt.reps, ctx, [&](auto x, auto y) {
              detail::blr_plan_apply_device<bfloat16>(A, Op::NoTrans, x, y, 1.0f, 0.0f, ctx, path);
            });
      };
      // Each explicit path of the plan beside Auto's row (*_plan): one cuBLAS call per stage
      // (rows *_plan_cublas), the fused kernel (*_plan_fused), for B <= 8 the decode kernel
      // (*_plan_decode), for B < 8 cuBLAS on 8 padded signals (*_plan_cublas_padded), for
      // B <= 16 the skinny stages (*_plan_skinny); returns the cuBLAS time.
      auto time_paths = [&](const auto& A, const std::string& name, Index r, Index b, Index params,
                            Index intermediate) {
        double t_cublas = 0;
        if (opt.tune) {
          const std::vector<double> t = time_tuned_and_not(A.cols(), A.rows(), [&](auto x, auto y) {
            detail::blr_plan_apply_device<bfloat16>(A, Op::NoTrans, x, y, 1.0f, 0.0f, ctx,
                                                    detail::PlanPath::Gemm);
          });
          t_cublas = t[0];
          row16_raw((name + "_plan_cublas_tuned").c_str(), r, b, params, intermediate, t[1]);
        } else {
          t_cublas = time_plan_path(A, detail::PlanPath::Gemm);
        }
        row16_raw((name + "_plan_cublas").c_str(), r, b, params, intermediate, t_cublas);
        row16_raw((name + "_plan_fused").c_str(), r, b, params, intermediate,
                  time_plan_path(A, detail::PlanPath::Fused));
        if (batch <= detail::kDecodeMaxBatch)
          row16_raw((name + "_plan_decode").c_str(), r, b, params, intermediate,
                    time_plan_path(A, detail::PlanPath::Decode));
        if (batch < detail::kPaddedSignals)
          row16_raw((name + "_plan_cublas_padded").c_str(), r, b, params, intermediate,
                    time_plan_path(A, detail::PlanPath::GemmPadded));
        if (batch <= detail::kSkinnyMaxTokens) {
          const double t_skinny = time_plan_path(A, detail::PlanPath::Skinny);
          row16_raw((name + "_plan_skinny").c_str(), r, b, params, intermediate, t_skinny);
          if (batch == 1) skinny_speedups_b1.push_back(t_cublas / t_skinny);
        }
        return t_cublas;
      };
      // BLAST's coupling stage alone, Z2[o][t][:] = sum_i s_oi[t] Z1[t][i][:] over r rank
      // indices (b x b couplings, B tokens): our streamed kernel as the plan runs it (tensor
      // cores where it applies), the same on CUDA cores, and the cuBLAS strided batch of the
      // same products (rows blast_coupling_*; bound: Z1 read, Z2 written, the couplings read
      // once).
      auto time_blast_coupling = [&](Index b, Index r) {
        DeviceMatrix<bfloat16> z1(b * r, batch, Layout::ColMajor, ctx),
            z2(b * r, batch, Layout::ColMajor, ctx), couplings(b * b, r, Layout::ColMajor, ctx);
        fill_random_device(z1.view(), 7, ctx);
        fill_random_device(couplings.view(), 9, ctx);
        detail::SmallInnerGemm g{};  // Z1[t] (B x b, ld B) times couplings[t]^T into Z2
        g.a = z1.view().data, g.b = couplings.view().data, g.c = z2.view().data;
        g.m = batch, g.n = b, g.k = b;
        g.lda = batch, g.ldb = b, g.ldc = r * batch;
        g.stride_a = b * batch, g.stride_b = b * b, g.stride_c = batch;
        g.batch = r, g.trans_b = true, g.alpha = 1.0, g.beta = 0.0, g.tensor_cores = true;
        detail::SmallInnerGemm cuda_cores = g;
        cuda_cores.tensor_cores = false;
        const std::vector<double> t = bench::median_seconds_each(
            ctx,
            {[&] { detail::small_inner_gemm<bfloat16>(g, ctx); },
             [&] { detail::small_inner_gemm<bfloat16>(cuda_cores, ctx); },
             [&] {
               const cublasStatus_t status = cublasGemmStridedBatchedEx(
                   static_cast<cublasHandle_t>(ctx.cublas()), CUBLAS_OP_N, CUBLAS_OP_T, int(batch),
                   int(b), int(b), &one, g.a, CUDA_R_16BF, int(batch), g.stride_a, g.b, CUDA_R_16BF,
                   int(b), g.stride_b, &zero, g.c, CUDA_R_16BF, int(r * batch), g.stride_c, int(r),
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
               if (status != CUBLAS_STATUS_SUCCESS) throw DeviceError("blr_bench: coupling GEMM");
             }},
            opt.reps);
        const char* names[3] = {"blast_coupling_streamed", "blast_coupling_cuda_cores",
                                "blast_coupling_cublas"};
        for (int w = 0; w < 3; ++w)
          write_bound_row(csv16, 2.0, t_dense16, names[w], r, b, b * b * r, 2 * b * r, t[w]);
      };
      // Intermediates of the plans: LowRank one (r rows), Monarch one (b^2 r' rows), BLAST two
      // (b r rows each).
      if (opt.tune) {
        // Dense bf16 through the library's GEMM call (a batch of one), untuned and tuned.
        const std::vector<double> t =
            time_tuned_and_not(l.in, l.out, [&](ConstView<bfloat16> x, MatrixView<bfloat16> y) {
              const cublasStatus_t status = detail::strided_batched_gemm(
                  ctx, CUBLAS_OP_N, CUBLAS_OP_N, int(l.out), int(batch), int(l.in), &one,
                  wd.view().data, CUDA_R_16BF, int(l.out), 0, x.data, int(l.in), 0, &zero, y.data,
                  int(l.out), 0, 1, CUBLAS_COMPUTE_32F);
              if (status != CUBLAS_STATUS_SUCCESS) throw DeviceError("blr_bench: dense GEMM");
            });
        row16_raw("dense_untuned", l.in, 1, l.in * l.out, 0, t[0]);
        row16_raw("dense_tuned", l.in, 1, l.in * l.out, 0, t[1]);
      }
      const double lowrank_t = time_bf16(lowrank);
      row16("lowrank_plan", l.lowrank_r, 1, lowrank.parameter_count(), l.lowrank_r, lowrank_t);
      {
        const double t =
            time_paths(lowrank, "lowrank", l.lowrank_r, 1, lowrank.parameter_count(), l.lowrank_r);
        if (batch == 1) decode_speedups_b1.push_back(t / lowrank_t);
      }
      // The unfused baselines' intermediates: Monarch three tensors of b^2 r' rows, BLAST
      // four of b r rows.
      if (monarch) {
        row("monarch_plan", l.monarch_r, mb, monarch->parameter_count(), mb * mb * per_block,
            time_plan(*monarch));
        row("monarch_unfused", l.monarch_r, mb, monarch->parameter_count(), 3 * mb * mb * per_block,
            time_unfused(float(), *monarch));
        float_path_rows(*monarch, "monarch", l.monarch_r, mb, monarch->parameter_count(),
                        mb * mb * per_block);
        const double fused = time_bf16(*monarch), unfused = time_unfused(bfloat16(), *monarch);
        row16("monarch_plan", l.monarch_r, mb, monarch->parameter_count(), mb * mb * per_block,
              fused);
        row16("monarch_unfused", l.monarch_r, mb, monarch->parameter_count(),
              3 * mb * mb * per_block, unfused);
        const double t = time_paths(*monarch, "monarch", l.monarch_r, mb,
                                    monarch->parameter_count(), mb * mb * per_block);
        if (batch == 1) decode_speedups_b1.push_back(t / fused);
        if (batch == 1024) monarch_speedups.push_back(unfused / fused);
        group_rows(*monarch, "monarch", l.monarch_r, mb, monarch->parameter_count(),
                   mb * mb * per_block);
      }
      row("blast_plan", l.blast_r, l.blast_b, blast.parameter_count(), 2 * l.blast_b * l.blast_r,
          time_plan(blast));
      row("blast_unfused", l.blast_r, l.blast_b, blast.parameter_count(), 4 * l.blast_b * l.blast_r,
          time_unfused(float(), blast));
      float_path_rows(blast, "blast", l.blast_r, l.blast_b, blast.parameter_count(),
                      2 * l.blast_b * l.blast_r);
      const double blast_fused = time_bf16(blast), blast_unfused = time_unfused(bfloat16(), blast);
      row16("blast_plan", l.blast_r, l.blast_b, blast.parameter_count(), 2 * l.blast_b * l.blast_r,
            blast_fused);
      row16("blast_unfused", l.blast_r, l.blast_b, blast.parameter_count(),
            4 * l.blast_b * l.blast_r, blast_unfused);
      {
        const double t = time_paths(blast, "blast", l.blast_r, l.blast_b, blast.parameter_count(),
                                    2 * l.blast_b * l.blast_r);
        if (batch == 1) decode_speedups_b1.push_back(t / blast_fused);
      }
      group_rows(blast, "blast", l.blast_r, l.blast_b, blast.parameter_count(),
                 2 * l.blast_b * l.blast_r);
      // BLAST's folded plan (two GEMMs, the couplings folded into the cheaper side's factors:
      // blast_folded_plan), from 16 tokens; its weights are the folded factor and the other
      // side's (as many values as its multiply-adds per token), its intermediate one tensor of
      // b r rows.
      if (batch >= 16) {
        const BlockGrid& g = blast.grid();
        row16_raw("blast_plan_folded", l.blast_r, l.blast_b,
                  detail::blast_fold_work(g, detail::blast_cheaper_fold(g)), l.blast_b * l.blast_r,
                  time_plan_path(blast, detail::PlanPath::GemmFolded));
      }
      if (batch == 1024) blast_speedups.push_back(blast_unfused / blast_fused);
      if (batch >= 128) time_blast_coupling(l.blast_b, l.blast_r);
#endif
    }
  }
  auto key = [](double v) { return v > 0 && v < 1e299 ? std::to_string(v) : std::string("null"); };
  std::ofstream json(opt.json);
  json << "{\"device\": \"" << device_name(0) << "\", \"dtype\": \"bf16\""
       << ", \"timing\": \""
       << (bench::timing() == bench::Timing::Graph     ? "graph replay"
           : bench::timing() == bench::Timing::Enqueue ? "host enqueue"
           : bench::timing() == bench::Timing::Cold    ? "per call, L2 evicted before each"
                                                       : "per call")
       << "\""
       << ", \"blast_fused_over_unfused_median\": " << key(bench::median_of(blast_speedups))
       << ", \"monarch_fused_over_unfused_median\": " << key(bench::median_of(monarch_speedups))
       << ", \"llama7b_b1024_min_speedup_over_dense\": " << key(llama_b1024_min_speedup)
       << ", \"llama7b_b1_min_speedup_over_dense\": " << key(llama_b1_min_speedup)
       << ", \"b1_max_time_over_bound\": " << key(b1_max_over_bound)
       << ", \"b1_decode_over_cublas_plan_median\": " << key(bench::median_of(decode_speedups_b1))
       << ", \"b1_cublas_plan_over_skinny_median\": " << key(bench::median_of(skinny_speedups_b1))
       << "}\n";
  return 0;
}
