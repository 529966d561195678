// Does compute-sanitizer's initcheck see the values cuBLAS's GEMMs store? A half GEMM writes
// every element of an uninitialized C (m x n); then a kernel of ours reads all of C. A report
// at read_all<size> means the tool missed the GEMM's stores (a false positive of the tool);
// as control, C is also written by a kernel of ours before the read. Case 6: cp.async with a
// source size of 0 (zero fill, the source not read) from memory never written; case 7 the same
// copy with 16 bytes from memory our kernel wrote.
//   nvcc -O2 -arch=sm_90 initcheck-cublas-store.cu -lcublas -o probe
//   compute-sanitizer --tool initcheck ./probe
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cstdio>

template <int Case>
__global__ void read_all(const __half* c, long long n, float* sink) {
  float s = 0;
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += __half2float(c[i]);
  if (s == 12345.0f) *sink = s;  // keeps the loads
}

__global__ void fill(__half* p, long long n) {
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = __float2half(0.5f);
}

template <int Case>
__global__ void copy_async_from(const __half* src, bool fill, float* sink) {
  __shared__ __align__(16) __half stage[256 * 8];
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(stage + 8 * threadIdx.x));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src + 8 * threadIdx.x), "r"(fill ? 16 : 0));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  if (__half2float(stage[threadIdx.x]) == 12345.0f) *sink = 1;
}

template <int Case>
void gemm_then_read(cublasHandle_t h, int m, int n, int k, float* sink) {
  __half *a, *b, *c;
  cudaMalloc(&a, sizeof(__half) * m * k);
  cudaMalloc(&b, sizeof(__half) * k * n);
  cudaMalloc(&c, sizeof(__half) * m * n);
  fill<<<64, 256>>>(a, (long long)m * k);
  fill<<<64, 256>>>(b, (long long)k * n);
  const float one = 1, zero = 0;
  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_16F, m, b, CUDA_R_16F, k,
               &zero, c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  read_all<Case><<<64, 256>>>(c, (long long)m * n, sink);
  cudaDeviceSynchronize();
  std::printf("case %d: %d x %d x %d, %s\n", Case, m, n, k, cudaGetErrorString(cudaGetLastError()));
  cudaFree(a), cudaFree(b), cudaFree(c);
}

int main() {
  cublasHandle_t h;
  cublasCreate(&h);
  float* sink;
  cudaMalloc(&sink, sizeof(float));
  gemm_then_read<1>(h, 64, 64, 64, sink);
  gemm_then_read<2>(h, 384, 384, 384, sink);
  gemm_then_read<3>(h, 2048, 2048, 2048, sink);
  gemm_then_read<4>(h, 4096, 16, 4096, sink);
  __half* c;  // control: written by a kernel of ours, then read
  cudaMalloc(&c, sizeof(__half) * 4096);
  fill<<<4, 256>>>(c, 4096);
  read_all<5><<<4, 256>>>(c, 4096, sink);
  cudaDeviceSynchronize();
  std::printf("case 5: written by our kernel\n");
  __half* never_written;
  cudaMalloc(&never_written, sizeof(__half) * 4096);
  copy_async_from<6><<<1, 256>>>(never_written, false, sink);
  copy_async_from<7><<<1, 256>>>(c, true, sink);
  cudaDeviceSynchronize();
  std::printf("cases 6, 7: cp.async %s\n", cudaGetErrorString(cudaGetLastError()));
  cublasDestroy(h);
  return 0;
}
