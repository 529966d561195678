// Probe (not built by CMake): does running BLAST's folded plan (two cuBLAS GEMMs) on token
// groups in concurrent streams hide the small-grid layers' fixed per-kernel costs? For the
// first fold (Z2^T = X^T F^T, then Y_k = U_k Z2_k per output block k), bf16, column-major
// signals, times replays of a CUDA graph of 10 layer calls: all tokens on one stream, or the
// tokens cut into `parts` groups, each group's two GEMMs on its own stream (fork and join by
// events inside the graph). Build and run on the GPU machine:
//   nvcc -O2 -std=c++17 -arch=sm_90 bench/probes/split_tokens_probe.cu -lcublas -o probe && ./probe
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                       \
  do {                                                                 \
    auto e_ = (x);                                                     \
    if (e_ != 0) {                                                     \
      std::printf("error %d at %s:%d\n", int(e_), __FILE__, __LINE__); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

struct Layer {
  const char* name;
  int in, out, b, r;
};

int main() {
  const Layer layers[] = {{"GPT2-S c_attn", 768, 2304, 6, 192},
                          {"GPT2-S c_fc", 768, 3072, 6, 192},
                          {"ViT-B fc1", 768, 3072, 3, 128},
                          {"DiT-XL/2 qkv", 1152, 3456, 9, 384},
                          {"DiT-XL/2 fc1", 1152, 4608, 9, 256}};
  const int kParts = 4, kCalls = 10, kReps = 30;
  std::vector<cudaStream_t> streams(kParts);
  std::vector<cublasHandle_t> handles(kParts);
  std::vector<cudaEvent_t> fork(kParts), join(kParts);
  for (int p = 0; p < kParts; ++p) {
    CHECK(cudaStreamCreateWithFlags(&streams[p], cudaStreamNonBlocking));
    CHECK(cublasCreate(&handles[p]));
    CHECK(cublasSetStream(handles[p], streams[p]));
    CHECK(cudaEventCreateWithFlags(&fork[p], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join[p], cudaEventDisableTiming));
  }
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  const float one = 1.0f, zero = 0.0f;
  for (int batch : {1024, 4096}) {
    for (const Layer& l : layers) {
      const int K = l.b, r = l.r, h = l.out / K;
      __nv_bfloat16 *x, *f, *u, *z, *y;
      CHECK(cudaMalloc(&x, sizeof(*x) * size_t(l.in) * batch));
      CHECK(cudaMalloc(&f, sizeof(*f) * size_t(K) * r * l.in));
      CHECK(cudaMalloc(&u, sizeof(*u) * size_t(l.out) * r));
      CHECK(cudaMalloc(&z, sizeof(*z) * size_t(K) * r * batch));
      CHECK(cudaMalloc(&y, sizeof(*y) * size_t(l.out) * batch));
      CHECK(cudaMemset(x, 0, sizeof(*x) * size_t(l.in) * batch));
      CHECK(cudaMemset(f, 0, sizeof(*f) * size_t(K) * r * l.in));
      CHECK(cudaMemset(u, 0, sizeof(*u) * size_t(l.out) * r));
      // Tokens [t0, t0 + n) of one layer call on handle p: Z2 of the group at z + K r t0
      // (column-major n x K r), then Y's columns.
      auto group = [&](int p, int tok0, int n) {
        __nv_bfloat16* zg = z + size_t(K) * r * tok0;
        CHECK(cublasGemmEx(handles[p], CUBLAS_OP_T, CUBLAS_OP_T, n, K * r, l.in, &one,
                           x + size_t(l.in) * tok0, CUDA_R_16BF, l.in, f, CUDA_R_16BF, K * r, &zero,
                           zg, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        CHECK(cublasGemmStridedBatchedEx(
            handles[p], CUBLAS_OP_N, CUBLAS_OP_T, h, n, r, &one, u, CUDA_R_16BF, h,
            (long long)h * r, zg, CUDA_R_16BF, n, (long long)r * n, &zero, y + size_t(l.out) * tok0,
            CUDA_R_16BF, l.out, h, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      std::printf("%s, %d tokens:", l.name, batch);
      for (int parts : {1, 2, 3, 4}) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeGlobal));
        for (int c = 0; c < kCalls; ++c) {
          CHECK(cudaEventRecord(fork[0], streams[0]));
          for (int p = 1; p < parts; ++p)
            CHECK(cudaStreamWaitEvent(streams[p], fork[0], 0));
          const int per = (batch / parts + 7) / 8 * 8;
          for (int p = 0; p < parts; ++p) {
            const int tok0 = p * per, n = std::min(batch, tok0 + per) - tok0;
            if (n > 0) group(p, tok0, n);
          }
          for (int p = 1; p < parts; ++p) {
            CHECK(cudaEventRecord(join[p], streams[p]));
            CHECK(cudaStreamWaitEvent(streams[0], join[p], 0));
          }
        }
        CHECK(cudaStreamEndCapture(streams[0], &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        std::vector<float> ms;
        for (int rep = 0; rep < kReps + 3; ++rep) {
          CHECK(cudaEventRecord(t0, streams[0]));
          CHECK(cudaGraphLaunch(exec, streams[0]));
          CHECK(cudaEventRecord(t1, streams[0]));
          CHECK(cudaEventSynchronize(t1));
          float t = 0;
          CHECK(cudaEventElapsedTime(&t, t0, t1));
          if (rep >= 3) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        std::printf("  %d part%s %.2f us", parts, parts > 1 ? "s" : "",
                    1000.0 * ms[ms.size() / 2] / kCalls);
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
      }
      std::printf("\n");
      CHECK(cudaFree(x));
      CHECK(cudaFree(f));
      CHECK(cudaFree(u));
      CHECK(cudaFree(z));
      CHECK(cudaFree(y));
    }
  }
  return 0;
}
