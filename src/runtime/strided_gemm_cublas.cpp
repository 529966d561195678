// The strided-batched GEMM shared by the operators, and its tuned cuBLASLt algorithm
// (runtime/strided_gemm.hpp).
#include <cublasLt.h>

#include <charconv>
#include <climits>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/strided_gemm.hpp"
#include "runtime/tuner.hpp"
#include "strop/core/buffer.hpp"
#include "strop/core/error.hpp"
#include "strop/core/timing.hpp"
#include "strop/core/tuning.hpp"

namespace strop::detail {
namespace {

// One call's arguments (cublasGemmStridedBatchedEx's, one type for the three matrices).
struct StridedGemm {
  cublasOperation_t trans_a, trans_b;
  int m, n, k, batch;
  const void* a;
  int lda;
  long long stride_a;
  const void* b;
  int ldb;
  long long stride_b;
  void* c;
  int ldc;
  long long stride_c;
  cudaDataType_t type;
  cublasComputeType_t compute;
  const void* alpha;
  const void* beta;
};

constexpr std::size_t kLtWorkspaceBytes = std::size_t(32) << 20;
constexpr int kLtCandidates = 8;
constexpr const char* kDefaultChoice = "cublas";

cublasStatus_t default_call(const StridedGemm& g, Context& ctx) {
  return cublasGemmStridedBatchedEx(static_cast<cublasHandle_t>(ctx.cublas()), g.trans_a, g.trans_b,
                                    g.m, g.n, g.k, g.alpha, g.a, g.type, g.lda, g.stride_a, g.b,
                                    g.type, g.ldb, g.stride_b, g.beta, g.c, g.type, g.ldc,
                                    g.stride_c, g.batch, g.compute, CUBLAS_GEMM_DEFAULT);
}

// Tuning covers the real types (complex products keep cuBLAS's choice).
bool tunable(const StridedGemm& g) {
  return g.type == CUDA_R_16F || g.type == CUDA_R_16BF || g.type == CUDA_R_32F ||
         g.type == CUDA_R_64F;
}

bool double_scale(const StridedGemm& g) {
  return g.compute == CUBLAS_COMPUTE_64F || g.compute == CUBLAS_COMPUTE_64F_PEDANTIC;
}

bool beta_is_zero(const StridedGemm& g) {
  return double_scale(g) ? *static_cast<const double*>(g.beta) == 0
                         : *static_cast<const float*>(g.beta) == 0;
}

std::size_t element_bytes(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
      return 4;
    default:
      return 8;
  }
}

// The alignment every batch entry of a matrix keeps (a power of two, at most 256 bytes, the
// most cuBLASLt asks about): its start's and, with several entries, its stride's.
std::uint32_t alignment(const void* start, long long stride, const StridedGemm& g) {
  std::uint64_t bits = reinterpret_cast<std::uintptr_t>(start) | 256;
  if (g.batch > 1) bits |= std::uint64_t(stride) * element_bytes(g.type);
  return std::uint32_t(bits & (~bits + 1));
}

// What tells products apart for tuning, as a map key: each call looks its choice up by these
// numbers (writing the text key costs more host time than a small product's launch).
struct ProductKey {
  int device, type, compute, trans_a, trans_b, m, n, k, batch, lda, ldb, ldc;
  long long stride_a, stride_b, stride_c;
  bool beta_zero;
  std::uint32_t align_a, align_b, align_c;
  auto operator<=>(const ProductKey&) const = default;
};

ProductKey product_key(const StridedGemm& g, Context& ctx) {
  return {ctx.device(),
          int(g.type),
          int(g.compute),
          int(g.trans_a),
          int(g.trans_b),
          g.m,
          g.n,
          g.k,
          g.batch,
          g.lda,
          g.ldb,
          g.ldc,
          g.stride_a,
          g.stride_b,
          g.stride_c,
          beta_is_zero(g),
          alignment(g.a, g.stride_a, g),
          alignment(g.b, g.stride_b, g),
          alignment(g.c, g.stride_c, g)};
}

// The tuning cache's key of a product: its numbers, with the device's name and the cuBLASLt
// version in place of the device id.
std::string tuning_key(const ProductKey& k) {
  auto op_letter = [](int op) { return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : 'C'; };
  return concat("gemm|", device_name(k.device), "|cublasLt ", cublasLtGetVersion(), "|type ",
                k.type, "/", k.compute, "|", op_letter(k.trans_a), op_letter(k.trans_b), "|", k.m,
                "x", k.n, "x", k.k, "|ld ", k.lda, ",", k.ldb, ",", k.ldc, "|stride ", k.stride_a,
                ",", k.stride_b, ",", k.stride_c, "|batch ", k.batch, "|beta ", k.beta_zero ? 0 : 1,
                "|align ", k.align_a, ",", k.align_b, ",", k.align_c);
}

// cuBLASLt's description of one product and the algorithms its heuristic proposed, made once
// per product and kept for the process (host objects only).
struct LtProduct {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::vector<cublasLtMatmulAlgo_t> algorithms;

  LtProduct() = default;
  LtProduct(const LtProduct&) = delete;
  LtProduct& operator=(const LtProduct&) = delete;
  ~LtProduct() {
    if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, int rows, int cols, int ld, int batch,
                                   long long stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld),
               "cublasLtMatrixLayoutCreate");
  check_cublas(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                sizeof batch),
               "cublasLtMatrixLayoutSetAttribute(batch)");
  check_cublas(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride),
               "cublasLtMatrixLayoutSetAttribute(stride)");
  return layout;
}

std::unique_ptr<LtProduct> describe(const StridedGemm& g, const ProductKey& key, Context& ctx) {
  auto p = std::make_unique<LtProduct>();
  const cudaDataType_t scale = double_scale(g) ? CUDA_R_64F : CUDA_R_32F;
  check_cublas(cublasLtMatmulDescCreate(&p->desc, g.compute, scale), "cublasLtMatmulDescCreate");
  check_cublas(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.trans_a,
                                              sizeof g.trans_a),
               "cublasLtMatmulDescSetAttribute(transa)");
  check_cublas(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.trans_b,
                                              sizeof g.trans_b),
               "cublasLtMatmulDescSetAttribute(transb)");
  const bool ta = g.trans_a != CUBLAS_OP_N, tb = g.trans_b != CUBLAS_OP_N;
  p->a = make_layout(g.type, ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.batch, g.stride_a);
  p->b = make_layout(g.type, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, g.batch, g.stride_b);
  p->c = make_layout(g.type, g.m, g.n, g.ldc, g.batch, g.stride_c);

  cublasLtMatmulPreference_t preference = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = kLtWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof workspace);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                       &key.align_a, sizeof key.align_a);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                       &key.align_b, sizeof key.align_b);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                       &key.align_c, sizeof key.align_c);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                       &key.align_c, sizeof key.align_c);
  cublasLtMatmulHeuristicResult_t results[kLtCandidates] = {};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(ctx.cublas_lt()), p->desc, p->a,
                                     p->b, p->c, p->c, preference, kLtCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status == CUBLAS_STATUS_SUCCESS)  // otherwise no candidates: cuBLAS's default stays
    for (int i = 0; i < found; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS) p->algorithms.push_back(results[i].algo);
  return p;
}

// The process's descriptions by product.
LtProduct& lt_product(const ProductKey& key, const StridedGemm& g, Context& ctx) {
  static std::mutex mutex;
  static std::map<ProductKey, std::unique_ptr<LtProduct>> products;
  std::lock_guard lock(mutex);
  std::unique_ptr<LtProduct>& p = products[key];
  if (!p) p = describe(g, key, ctx);
  return *p;
}

// Algorithm `index` of `p` on ctx's stream; NOT_SUPPORTED when there is no such algorithm or
// no workspace can be had (under graph capture before the first tuned call).
cublasStatus_t lt_call(const LtProduct& p, std::size_t index, const StridedGemm& g, Context& ctx) {
  if (index >= p.algorithms.size()) return CUBLAS_STATUS_NOT_SUPPORTED;
  void* workspace = ctx.persistent_workspace("cublasLt gemm", kLtWorkspaceBytes);
  if (workspace == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;
  return cublasLtMatmul(static_cast<cublasLtHandle_t>(ctx.cublas_lt()), p.desc, g.alpha, g.a, p.a,
                        g.b, p.b, g.beta, g.c, p.c, g.c, p.c, &p.algorithms[index], workspace,
                        kLtWorkspaceBytes, static_cast<cudaStream_t>(ctx.stream()));
}

std::string lt_choice(std::size_t index) {
  return concat("lt", index);
}

// Times cuBLAS's default and every proposed algorithm, in alternation from CUDA graphs, on a
// scratch copy of C's extent (its values do not matter: only the time is kept); stores and
// returns the fastest. A candidate that refuses the call is left out.
std::string measure(const std::string& key, const StridedGemm& g, LtProduct& p, Context& ctx) {
  const std::size_t extent = std::size_t(g.batch - 1) * std::size_t(g.stride_c) +
                             std::size_t(g.n - 1) * std::size_t(g.ldc) + std::size_t(g.m);
  Buffer<unsigned char> scratch(Index(extent * element_bytes(g.type)), MemorySpace::Device, ctx);
  check_cuda(cudaMemsetAsync(scratch.data(), 0, std::size_t(scratch.size()),
                             static_cast<cudaStream_t>(ctx.stream())),
             "cudaMemsetAsync (gemm tuning scratch)");
  StridedGemm s = g;
  s.c = scratch.data();
  std::vector<std::string> names;
  std::vector<std::function<void()>> works;
  if (default_call(s, ctx) == CUBLAS_STATUS_SUCCESS) {
    names.push_back(kDefaultChoice);
    works.push_back([&] { default_call(s, ctx); });
  }
  for (std::size_t i = 0; i < p.algorithms.size(); ++i)
    if (lt_call(p, i, s, ctx) == CUBLAS_STATUS_SUCCESS) {
      names.push_back(lt_choice(i));
      works.push_back([&, i] { lt_call(p, i, s, ctx); });
    }
  std::string best = kDefaultChoice;
  if (works.size() > 1) {
    const std::vector<double> seconds = median_graph_seconds_each(ctx, works, 5, 4, 1);
    double best_seconds = std::numeric_limits<double>::infinity();
    for (std::size_t w = 0; w < works.size(); ++w)
      if (seconds[w] < best_seconds) best_seconds = seconds[w], best = names[w];
  }
  store_tuned_choice(key, best);
  return best;
}

// A choice as it runs: cuBLAS's default (no product) or algorithm `index` of `product`; valid
// while the tuning cache's generation is `generation`. Not `kept` when it is the default only
// because nothing could be measured (under graph capture): the next call looks again.
struct Resolved {
  std::uint64_t generation = 0;
  const LtProduct* product = nullptr;
  std::size_t index = 0;
  bool kept = true;
};

// The cached choice for `g` (measured first when there is none and the stream is not being
// captured; cuBLAS's default under capture).
Resolved resolve(const StridedGemm& g, const ProductKey& key, Context& ctx) {
  const std::string text = tuning_key(key);
  std::optional<std::string> choice = tuned_choice(text);
  if (!choice) {
    if (ctx.capturing()) return {tuning_generation(), nullptr, 0, false};
    choice = measure(text, g, lt_product(key, g, ctx), ctx);
  }
  // "lt<index>"; anything else (cuBLAS's default, or a value this version does not know from
  // a cache file) runs cuBLAS's default.
  Resolved r{tuning_generation()};
  std::size_t index = 0;
  const char* last = choice->data() + choice->size();
  if (choice->size() > 2 && choice->rfind("lt", 0) == 0 &&
      std::from_chars(choice->data() + 2, last, index).ptr == last)
    r.product = &lt_product(key, g, ctx), r.index = index;
  return r;
}

}  // namespace

cublasStatus_t strided_batched_gemm(Context& ctx, cublasOperation_t trans_a,
                                    cublasOperation_t trans_b, long long m, long long n,
                                    long long k, const void* alpha, const void* a,
                                    cudaDataType_t type, long long lda, long long stride_a,
                                    const void* b, long long ldb, long long stride_b,
                                    const void* beta, void* c, long long ldc, long long stride_c,
                                    long long batch, cublasComputeType_t compute) {
  // Sizes beyond an int: cuBLAS's 64-bit interface with its default algorithm, never tuned.
  // The tuned path's keys and cuBLASLt descriptions are of 32-bit products (kept as they are,
  // so cached choices stay valid), and measuring would allocate scratch the size of C, which
  // at these sizes is gigabytes.
  auto fits = [](long long v) { return v >= INT_MIN && v <= INT_MAX; };
  if (!fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) || !fits(ldc) || !fits(batch)) {
#if CUBLAS_VER_MAJOR >= 12  // the 64-bit interface came with CUDA 12
    return cublasGemmStridedBatchedEx_64(static_cast<cublasHandle_t>(ctx.cublas()), trans_a,
                                         trans_b, m, n, k, alpha, a, type, lda, stride_a, b, type,
                                         ldb, stride_b, beta, c, type, ldc, stride_c, batch,
                                         compute, CUBLAS_GEMM_DEFAULT);
#else
    return CUBLAS_STATUS_NOT_SUPPORTED;  // the caller's DeviceError names the sizes
#endif
  }
  const StridedGemm g{trans_a,  trans_b,  int(m),  int(n),   int(k),   int(batch), a,
                      int(lda), stride_a, b,       int(ldb), stride_b, c,          int(ldc),
                      stride_c, type,     compute, alpha,    beta};
  if (!tuning_enabled() || !tunable(g) || g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0)
    return default_call(g, ctx);
  static std::mutex mutex;
  static std::map<ProductKey, Resolved> resolved;
  const ProductKey key = product_key(g, ctx);
  Resolved choice;
  bool known = false;
  {
    std::lock_guard lock(mutex);
    const auto it = resolved.find(key);
    known = it != resolved.end() && it->second.generation == tuning_generation();
    if (known) choice = it->second;
  }
  if (!known) {
    choice = resolve(g, key, ctx);
    std::lock_guard lock(mutex);
    if (choice.kept) resolved[key] = choice;
  }
  if (choice.product == nullptr) return default_call(g, ctx);
  const cublasStatus_t status = lt_call(*choice.product, choice.index, g, ctx);
  return status == CUBLAS_STATUS_SUCCESS ? status : default_call(g, ctx);
}

}  // namespace strop::detail
