// bench/probes/stl_overlap_probe.cu: a standalone measurement (not built by CMake, not part
// of the library) made for issue #6 in session 20. Question: can the STL layer's memory-bound
// steps (encode, decode, or the chain's decode-encode mixing) hide under the compute-bound
// colour GEMMs, if the signals are cut into chunks, the GEMMs run on a cuBLAS handle with an
// SM count target below the device's and the memory kernels on a second, high-priority
// stream with a grid that fits the SMs left over? Also: encode/decode variants (coefficients
// in constant memory with r known at compile time, or in shared memory with r at run time).
// n = B = 8192 (or argv[1]), t = 4, r = 32, half, ColMajor X/Y. Results and conclusions:
// bench/results/stl-overlap-probe-*.txt and bench/NOTES-stl.md (session 20).
//   nvcc -O3 -arch=sm_90 -std=c++17 stl_overlap_probe.cu -lcublas -o probe && ./probe 8192
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t err_ = (x);                                                       \
    if (err_ != cudaSuccess) {                                                    \
      std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)
#define CB(x)                                                    \
  do {                                                           \
    cublasStatus_t st_ = (x);                                    \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                          \
      std::printf("cuBLAS %d at line %d\n", int(st_), __LINE__); \
      std::exit(1);                                              \
    }                                                            \
  } while (0)

constexpr int R = 32;
__constant__ float c_enc[R * 16], c_dec[R * 16], c_mix[R * R];

struct alignas(8) H4 {
  __half v[4];
};

// Pairs are feature-fast: e = F + FT * S (F feature tile, S signal tile). A chunk is a range
// of signal tiles [s0, s1).
__global__ void encode(const __half* x, long n, int FT, int s0, int s1, __half* xh, long pairs) {
  const long first = long(s0) * FT, last = long(s1) * FT;
  for (long e = first + blockIdx.x * long(blockDim.x) + threadIdx.x; e < last;
       e += long(gridDim.x) * blockDim.x) {
    const long F = e % FT, S = e / FT;
    float v[16];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      H4 q = *reinterpret_cast<const H4*>(x + (S * 4 + i) * n + F * 4);
#pragma unroll
      for (int f = 0; f < 4; ++f)
        v[i + 4 * f] = __half2float(q.v[f]);
    }
#pragma unroll
    for (int p = 0; p < R; ++p) {
      float a = 0;
#pragma unroll
      for (int k = 0; k < 16; ++k)
        a = fmaf(c_enc[p * 16 + k], v[k], a);
      xh[p * pairs + e] = __float2half(a);
    }
  }
}

__global__ void decode(const __half* yh, long pairs, int FT, int s0, int s1, __half* y, long n) {
  const long first = long(s0) * FT, last = long(s1) * FT;
  for (long e = first + blockIdx.x * long(blockDim.x) + threadIdx.x; e < last;
       e += long(gridDim.x) * blockDim.x) {
    const long F = e % FT, S = e / FT;
    float o[16] = {};
#pragma unroll
    for (int p = 0; p < R; ++p) {
      const float c = __half2float(yh[p * pairs + e]);
#pragma unroll
      for (int k = 0; k < 16; ++k)
        o[k] = fmaf(c_dec[p * 16 + k], c, o[k]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      H4 q;
#pragma unroll
      for (int g = 0; g < 4; ++g)
        q.v[g] = __float2half(o[i + 4 * g]);
      *reinterpret_cast<H4*>(y + (S * 4 + i) * n + F * 4) = q;
    }
  }
}

__global__ void mix(const __half* yh, long pairs, int FT, int s0, int s1, __half* xh) {
  const long first = long(s0) * FT, last = long(s1) * FT;
  for (long e = first + blockIdx.x * long(blockDim.x) + threadIdx.x; e < last;
       e += long(gridDim.x) * blockDim.x) {
    float c[R];
#pragma unroll
    for (int p = 0; p < R; ++p)
      c[p] = __half2float(yh[p * pairs + e]);
#pragma unroll
    for (int q = 0; q < R; ++q) {
      float a = 0;
#pragma unroll
      for (int p = 0; p < R; ++p)
        a = fmaf(c_mix[q * R + p], c[p], a);
      xh[q * pairs + e] = __float2half(a);
    }
  }
}

template <bool VEC>
__global__ void encode_sh(const float* enc, int rank, const __half* x, long n, int FT, __half* xh,
                          long pairs) {
  __shared__ __align__(16) float coef[64 * 16];
  for (int i = threadIdx.x; i < rank * 16; i += blockDim.x)
    coef[i] = enc[i];
  __syncthreads();
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < pairs;
       e += long(gridDim.x) * blockDim.x) {
    const long F = e % FT, S = e / FT;
    float v[16];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      H4 q = *reinterpret_cast<const H4*>(x + (S * 4 + i) * n + F * 4);
#pragma unroll
      for (int f = 0; f < 4; ++f)
        v[i + 4 * f] = __half2float(q.v[f]);
    }
#pragma unroll 2
    for (int p = 0; p < rank; ++p) {
      float a = 0;
      if (VEC) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float4 c = reinterpret_cast<const float4*>(coef + p * 16)[q];
          a = fmaf(c.x, v[4 * q], a);
          a = fmaf(c.y, v[4 * q + 1], a);
          a = fmaf(c.z, v[4 * q + 2], a);
          a = fmaf(c.w, v[4 * q + 3], a);
        }
      } else {
#pragma unroll
        for (int k = 0; k < 16; ++k)
          a = fmaf(coef[p * 16 + k], v[k], a);
      }
      xh[p * pairs + e] = __float2half(a);
    }
  }
}
template <bool VEC>
__global__ void decode_sh(const float* dec, int rank, const __half* yh, long pairs, int FT,
                          __half* y, long n) {
  __shared__ __align__(16) float coef[64 * 16];
  for (int i = threadIdx.x; i < rank * 16; i += blockDim.x)
    coef[i] = dec[i];
  __syncthreads();
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < pairs;
       e += long(gridDim.x) * blockDim.x) {
    const long F = e % FT, S = e / FT;
    float o[16] = {};
#pragma unroll 2
    for (int p = 0; p < rank; ++p) {
      const float c = __half2float(yh[p * pairs + e]);
      if (VEC) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float4 d = reinterpret_cast<const float4*>(coef + p * 16)[q];
          o[4 * q] = fmaf(d.x, c, o[4 * q]);
          o[4 * q + 1] = fmaf(d.y, c, o[4 * q + 1]);
          o[4 * q + 2] = fmaf(d.z, c, o[4 * q + 2]);
          o[4 * q + 3] = fmaf(d.w, c, o[4 * q + 3]);
        }
      } else {
#pragma unroll
        for (int k = 0; k < 16; ++k)
          o[k] = fmaf(coef[p * 16 + k], c, o[k]);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      H4 q;
#pragma unroll
      for (int g = 0; g < 4; ++g)
        q.v[g] = __float2half(o[i + 4 * g]);
      *reinterpret_cast<H4*>(y + (S * 4 + i) * n + F * 4) = q;
    }
  }
}

__global__ void fill(__half* p, long count, unsigned seed) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count;
       i += long(gridDim.x) * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    p[i] = __float2half(float(x >> 40) * (2.0f / 16777216.0f) - 1.0f);
  }
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 8192;
  const int FT = int(n / 4), ST = int(n / 4);
  const long pairs = long(FT) * ST;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  __half *x, *y, *xh, *yh, *w;
  CK(cudaMalloc(&x, n * n * 2));
  CK(cudaMalloc(&y, n * n * 2));
  CK(cudaMalloc(&xh, R * pairs * 2));
  CK(cudaMalloc(&yh, R * pairs * 2));
  CK(cudaMalloc(&w, R * long(FT) * FT * 2));
  fill<<<1024, 256>>>(x, n * n, 1);
  fill<<<1024, 256>>>(w, R * long(FT) * FT, 2);
  fill<<<1024, 256>>>(xh, R * pairs, 3);
  fill<<<1024, 256>>>(yh, R * pairs, 4);
  std::vector<float> coef(R * R);
  for (int i = 0; i < R * R; ++i)
    coef[i] = ((i * 37) % 11 - 5) * 0.05f;
  CK(cudaMemcpyToSymbol(c_enc, coef.data(), R * 16 * 4));
  CK(cudaMemcpyToSymbol(c_dec, coef.data(), R * 16 * 4));
  CK(cudaMemcpyToSymbol(c_mix, coef.data(), R * R * 4));
  int lo, hi;
  CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t main_s, gemm_s, mem_s;
  CK(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&gemm_s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&mem_s, cudaStreamNonBlocking, hi));
  cublasHandle_t h;
  CB(cublasCreate(&h));
  const float one = 1, zero = 0;
  std::vector<cudaEvent_t> ev(256);
  for (auto& e : ev)
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  auto gemm = [&](cudaStream_t s, int s0, int s1) {
    CB(cublasSetStream(h, s));
    CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, FT, s1 - s0, FT, &one, w, CUDA_R_16F,
                                  FT, long(FT) * FT, xh + long(s0) * FT, CUDA_R_16F, FT, pairs,
                                  &zero, yh + long(s0) * FT, CUDA_R_16F, FT, pairs, R,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  auto time = [&](const char* name, std::function<void()> body) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int rep = 0; rep < 13; ++rep) {
      CK(cudaEventRecord(a, main_s));
      body();
      CK(cudaEventRecord(b, main_s));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      if (rep >= 3) ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    std::printf("%-48s %8.3f ms\n", name, ts[ts.size() / 2]);
    std::fflush(stdout);
    return ts[ts.size() / 2];
  };
  const int threads = 256;
  const int full_grid = sms * 8;
  float* dcoef;
  CK(cudaMalloc(&dcoef, R * 16 * 4));
  CK(cudaMemcpy(dcoef, coef.data(), R * 16 * 4, cudaMemcpyHostToDevice));
  const int one_per_pair = int(std::min<long>((pairs + 255) / 256, 65535L * 4));
  for (int grid : {full_grid, one_per_pair}) {
    char name[96];
    std::snprintf(name, sizeof name, "enc+dec shared scalar, grid %d", grid);
    time(name, [&] {
      encode_sh<false><<<grid, threads, 0, main_s>>>(dcoef, R, x, n, FT, xh, pairs);
      decode_sh<false><<<grid, threads, 0, main_s>>>(dcoef, R, yh, pairs, FT, y, n);
    });
    std::snprintf(name, sizeof name, "enc+dec shared float4, grid %d", grid);
    time(name, [&] {
      encode_sh<true><<<grid, threads, 0, main_s>>>(dcoef, R, x, n, FT, xh, pairs);
      decode_sh<true><<<grid, threads, 0, main_s>>>(dcoef, R, yh, pairs, FT, y, n);
    });
    std::snprintf(name, sizeof name, "enc only shared float4, grid %d", grid);
    time(name,
         [&] { encode_sh<true><<<grid, threads, 0, main_s>>>(dcoef, R, x, n, FT, xh, pairs); });
    std::snprintf(name, sizeof name, "dec only shared float4, grid %d", grid);
    time(name,
         [&] { decode_sh<true><<<grid, threads, 0, main_s>>>(dcoef, R, yh, pairs, FT, y, n); });
  }
  if (argc > 2) return 0;
  // One-stream baselines.
  time("colours (full grid)", [&] { gemm(main_s, 0, ST); });
  for (int target : {sms - 8, sms - 16, sms - 24, sms - 32}) {
    CB(cublasSetSmCountTarget(h, target));
    char name[64];
    std::snprintf(name, sizeof name, "colours, SM target %d", target);
    time(name, [&] { gemm(main_s, 0, ST); });
  }
  CB(cublasSetSmCountTarget(h, 0));
  for (int blocks_sms : {8, 16, 24, 32, sms}) {
    char name[64];
    std::snprintf(name, sizeof name, "encode+decode on %d SMs' grid", blocks_sms);
    time(name, [&] {
      encode<<<blocks_sms * 8, threads, 0, main_s>>>(x, n, FT, 0, ST, xh, pairs);
      decode<<<blocks_sms * 8, threads, 0, main_s>>>(yh, pairs, FT, 0, ST, y, n);
    });
  }
  for (int blocks_sms : {16, 24, sms}) {
    char name[64];
    std::snprintf(name, sizeof name, "mix on %d SMs' grid", blocks_sms);
    time(name, [&] { mix<<<blocks_sms * 8, threads, 0, main_s>>>(yh, pairs, FT, 0, ST, xh); });
  }
  const float serial = time("layer serial (encode, colours, decode)", [&] {
    encode<<<full_grid, threads, 0, main_s>>>(x, n, FT, 0, ST, xh, pairs);
    gemm(main_s, 0, ST);
    decode<<<full_grid, threads, 0, main_s>>>(yh, pairs, FT, 0, ST, y, n);
  });
  const float serial_mix = time("chain step serial (colours, mix)", [&] {
    gemm(main_s, 0, ST);
    mix<<<full_grid, threads, 0, main_s>>>(yh, pairs, FT, 0, ST, xh);
  });
  (void)serial;
  (void)serial_mix;
  // Pipelined: chunk c's GEMM on gemm_s after its encode on mem_s; its decode on mem_s after
  // the GEMM. mem_s: encode 0, encode 1, decode 0, encode 2, decode 1, ...
  for (bool chain : {false, true}) {
    for (int chunks : {4, 8, 16}) {
      for (int carve : {0, 8, 16, 24, 32}) {
        const int mem_grid = carve == 0 ? full_grid : carve * 8;
        auto body = [&] {
          const int step = ST / chunks;
          CB(cublasSetSmCountTarget(h, carve == 0 ? 0 : sms - carve));
          int k = 0;
          CK(cudaEventRecord(ev[k], main_s));
          CK(cudaStreamWaitEvent(gemm_s, ev[k]));
          CK(cudaStreamWaitEvent(mem_s, ev[k]));
          ++k;
          auto pre = [&](int c) {
            if (!chain)
              encode<<<mem_grid, threads, 0, mem_s>>>(x, n, FT, c * step, (c + 1) * step, xh,
                                                      pairs);
            CK(cudaEventRecord(ev[k], mem_s));
            CK(cudaStreamWaitEvent(gemm_s, ev[k]));
            ++k;
          };
          pre(0);
          for (int c = 0; c < chunks; ++c) {
            gemm(gemm_s, c * step, (c + 1) * step);
            CK(cudaEventRecord(ev[k], gemm_s));
            const int done = k++;
            if (c + 1 < chunks) pre(c + 1);
            CK(cudaStreamWaitEvent(mem_s, ev[done]));
            if (chain)
              mix<<<mem_grid, threads, 0, mem_s>>>(yh, pairs, FT, c * step, (c + 1) * step, xh);
            else
              decode<<<mem_grid, threads, 0, mem_s>>>(yh, pairs, FT, c * step, (c + 1) * step, y,
                                                      n);
          }
          CK(cudaEventRecord(ev[k], mem_s));
          CK(cudaStreamWaitEvent(main_s, ev[k]));
          ++k;
          CK(cudaEventRecord(ev[k], gemm_s));
          CK(cudaStreamWaitEvent(main_s, ev[k]));
          CB(cublasSetSmCountTarget(h, 0));
        };
        char name[96];
        std::snprintf(name, sizeof name, "%s pipelined, %d chunks, carve %d SMs",
                      chain ? "chain step" : "layer", chunks, carve);
        time(name, body);
      }
    }
  }
  // Dense reference for the ratio.
  __half* wd;
  CK(cudaMalloc(&wd, n * n * 2));
  fill<<<1024, 256>>>(wd, n * n, 5);
  CB(cublasSetStream(h, main_s));
  const int ni = int(n);
  time("dense cublasGemmEx", [&] {
    CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, wd, CUDA_R_16F, ni, x,
                    CUDA_R_16F, ni, &zero, y, CUDA_R_16F, ni, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
  });
  return 0;
}
