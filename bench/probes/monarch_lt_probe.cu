// Probe (not built by CMake; bench/probes/monarch-lt-run.sh compiles and runs it): how far
// cuBLAS's default choice for the two strided batched GEMMs of the Monarch plan
// (operators/blr/blr_gemm_plan.cpp, session 27) is from the fastest cuBLASLt algorithm for the
// same product, bf16 in and out, fp32 sums. Question for a tuned plan (issue #9: Monarch on
// Llama-7B qkvo at B = 1024 replays at 1.09x dense, the target is 1.3x).
//
//   monarch_lt_probe n b r_block B      (n x n layer, b x b blocks, rank r_block per block)
//
// Stage 1 (per input block i, i < b): Z1_i^T (B x b r) = X_i^T F_i^T, ldc = b B, stride B.
// Stage 2 (per output block o): Y_o (n/b x B) = G_o (n/b x r b) Z1_o, Z1_o read as op T of a
// column-major B x (r b) matrix, Y column-major with ld n. Times are per call, from replays of CUDA
// graphs of 20 calls (median of 15); every algorithm's result is compared with the
// default call's (max abs difference) so that a wrong layout cannot look fast.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                 \
  do {                                                                           \
    auto s_ = (x);                                                               \
    if (s_ != 0) {                                                               \
      std::fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, int(s_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

struct Gemm {  // column-major, cuBLAS terms
  cublasOperation_t ta, tb;
  int m, n, k, batch;
  long long lda, ldb, ldc, sa, sb, sc;
  const __nv_bfloat16 *a, *b;
  __nv_bfloat16* c;
};

cudaStream_t g_stream;  // every call runs on it, so that it can be captured

// Median over 15 replays of a CUDA graph holding 20 back-to-back calls, per call: GPU time
// only (timing calls as they are enqueued would include cuBLAS's host time whenever a call
// is shorter than its enqueue).
template <class F>
float median_us(F f) {
  constexpr int kCallsPerSample = 20;
  for (int i = 0; i < 3; ++i)
    f();
  CHECK(cudaStreamSynchronize(g_stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
  for (int c = 0; c < kCallsPerSample; ++c)
    f();
  CHECK(cudaStreamEndCapture(g_stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (int i = 0; i < 3; ++i)
    CHECK(cudaGraphLaunch(exec, g_stream));
  std::vector<float> t;
  for (int i = 0; i < 15; ++i) {
    cudaEventRecord(e0, g_stream);
    CHECK(cudaGraphLaunch(exec, g_stream));
    cudaEventRecord(e1, g_stream);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3f / kCallsPerSample);
  }
  cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

float max_difference(const __nv_bfloat16* x, const __nv_bfloat16* y, size_t count) {
  std::vector<__nv_bfloat16> hx(count), hy(count);
  cudaMemcpy(hx.data(), x, count * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(hy.data(), y, count * 2, cudaMemcpyDeviceToHost);
  float worst = 0;
  for (size_t i = 0; i < count; ++i)
    worst = std::max(worst, std::fabs(__bfloat162float(hx[i]) - __bfloat162float(hy[i])));
  return worst;
}

void probe(const char* name, Gemm g, size_t c_count, cublasHandle_t blas, cublasLtHandle_t lt,
           void* workspace, size_t workspace_bytes) {
  const float one = 1, zero = 0;
  auto run_default = [&] {
    CHECK(cublasGemmStridedBatchedEx(blas, g.ta, g.tb, g.m, g.n, g.k, &one, g.a, CUDA_R_16BF,
                                     int(g.lda), g.sa, g.b, CUDA_R_16BF, int(g.ldb), g.sb, &zero,
                                     g.c, CUDA_R_16BF, int(g.ldc), g.sc, g.batch,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  const float t_default = median_us(run_default);
  __nv_bfloat16* reference = nullptr;
  CHECK(cudaMalloc(&reference, c_count * 2));
  CHECK(cudaMemcpy(reference, g.c, c_count * 2, cudaMemcpyDeviceToDevice));

  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.ta, sizeof g.ta));
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.tb, sizeof g.tb));
  auto layout = [&](int rows, int cols, long long ld, long long stride) {
    cublasLtMatrixLayout_t l;
    CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, rows, cols, ld));
    CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &g.batch,
                                           sizeof g.batch));
    CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof stride));
    return l;
  };
  const bool ta = g.ta == CUBLAS_OP_T, tb = g.tb == CUBLAS_OP_T;
  cublasLtMatrixLayout_t la = layout(ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.sa);
  cublasLtMatrixLayout_t lb = layout(tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, g.sb);
  cublasLtMatrixLayout_t lc = layout(g.m, g.n, g.ldc, g.sc);
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t results[32];
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 32, results, &found));
  float best = 1e30f;
  int best_index = -1;
  for (int i = 0; i < found; ++i) {
    auto run = [&] {
      CHECK(cublasLtMatmul(lt, desc, &one, g.a, la, g.b, lb, &zero, g.c, lc, g.c, lc,
                           &results[i].algo, workspace, workspace_bytes, g_stream));
    };
    const float t = median_us(run);
    const float diff = max_difference(reference, g.c, c_count);
    std::printf("  %s algo %2d: %8.2f us (max |diff| %.3g)\n", name, i, t, diff);
    if (diff < 0.05f && t < best) best = t, best_index = i;
  }
  const double flops = 2.0 * g.m * g.n * g.k * g.batch;
  std::printf(
      "%s: default %.2f us (%.0f TFLOP/s), best of %d Lt algos %.2f us (#%d), default / "
      "best %.3f\n",
      name, t_default, flops / t_default * 1e-6, found, best, best_index, t_default / best);
  cudaFree(reference);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: monarch_lt_probe n b r_block B\n");
    return 2;
  }
  const long long n = std::atoll(argv[1]), b = std::atoll(argv[2]), r = std::atoll(argv[3]),
                  B = std::atoll(argv[4]);
  const long long w = n / b, h = n / b;
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  CHECK(cublasCreate(&blas));
  CHECK(cublasLtCreate(&lt));
  const size_t workspace_bytes = size_t(64) << 20;
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, workspace_bytes));
  CHECK(cublasSetWorkspace(blas, workspace, workspace_bytes));
  CHECK(cudaStreamCreate(&g_stream));
  CHECK(cublasSetStream(blas, g_stream));
  // X (n x B), F (by column: b blocks of (b r) x w), Z1 (b r b B), G (b blocks of h x r b), Y.
  const size_t x_count = n * B, f_count = b * b * r * w, z_count = b * r * b * B,
               g_count = b * h * r * b, y_count = n * B;
  std::vector<__nv_bfloat16> host(std::max({x_count, f_count, g_count}));
  srand(1);
  for (auto& v : host)
    v = __float2bfloat16(float(rand()) / RAND_MAX - 0.5f);
  __nv_bfloat16 *x, *f, *z, *g, *y;
  CHECK(cudaMalloc(&x, x_count * 2));
  CHECK(cudaMalloc(&f, f_count * 2));
  CHECK(cudaMalloc(&z, z_count * 2));
  CHECK(cudaMalloc(&g, g_count * 2));
  CHECK(cudaMalloc(&y, y_count * 2));
  CHECK(cudaMemcpy(x, host.data(), x_count * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(f, host.data(), f_count * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(g, host.data(), g_count * 2, cudaMemcpyHostToDevice));
  std::printf("# n %lld, %lld x %lld blocks, rank %lld per block, B %lld\n", n, b, b, r, B);
  // Stage 1: m = B, n = b r, k = w; A = X_i (op T, lda n, stride w); B = F_i (op T, ld b r).
  probe("stage 1",
        {CUBLAS_OP_T, CUBLAS_OP_T, int(B), int(b * r), int(w), int(b), n, b * r, b * B, w,
         b * r * w, B, x, f, z},
        z_count, blas, lt, workspace, workspace_bytes);
  // Stage 2: m = h, n = B, k = r b; A = G_o (op N, lda h); B = Z1_o (op T, ld B, stride r b B).
  probe("stage 2",
        {CUBLAS_OP_N, CUBLAS_OP_T, int(h), int(B), int(r * b), int(b), h, B, n, h * r * b,
         r * b * B, h, g, z, y},
        y_count, blas, lt, workspace, workspace_bytes);
  // Dense reference on the same device: Y (n x B) = W (n x n) X, W random.
  __nv_bfloat16* dense = nullptr;
  CHECK(cudaMalloc(&dense, n * n * 2));
  host.resize(n * n);
  for (auto& v : host)
    v = __float2bfloat16(float(rand()) / RAND_MAX - 0.5f);
  CHECK(cudaMemcpy(dense, host.data(), n * n * 2, cudaMemcpyHostToDevice));
  const float one = 1, zero = 0;
  const float t_dense = median_us([&] {
    CHECK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(B), int(n), &one, dense,
                       CUDA_R_16BF, int(n), x, CUDA_R_16BF, int(n), &zero, y, CUDA_R_16BF, int(n),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  std::printf("dense %lld x %lld x %lld: %.2f us\n", n, n, B, t_dense);
  cudaFree(dense);
  return 0;
}
