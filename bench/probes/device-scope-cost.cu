// What the per-call device checks of session 40 cost (OperatorBase::apply on device views):
// cudaGetDevice (DeviceScope) and cudaPointerGetAttributes (require_usable_on_device), each
// timed over many calls on the host, next to an empty kernel launch for scale.
//   nvcc -O2 -arch=sm_90 bench/probes/device-scope-cost.cu -o /tmp/cost && /tmp/cost
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void empty_kernel() {}

template <class F>
double nanoseconds_per_call(F f, int calls = 200000) {
  for (int i = 0; i < 1000; ++i)
    f();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i)
    f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

int main() {
  void* device = nullptr;
  cudaMalloc(&device, 1 << 20);
  void* pooled = nullptr;
  cudaMallocAsync(&pooled, 1 << 20, 0);
  cudaDeviceSynchronize();
  static float host[1024];
  cudaPointerAttributes attributes{};
  int current = 0;
  std::printf("cudaGetDevice: %.1f ns\n", nanoseconds_per_call([&] { cudaGetDevice(&current); }));
  std::printf("cudaPointerGetAttributes (cudaMalloc): %.1f ns\n",
              nanoseconds_per_call([&] { cudaPointerGetAttributes(&attributes, device); }));
  std::printf("cudaPointerGetAttributes (pool, offset): %.1f ns\n", nanoseconds_per_call([&] {
                cudaPointerGetAttributes(&attributes, static_cast<char*>(pooled) + 4096);
              }));
  std::printf("cudaPointerGetAttributes (host): %.1f ns\n",
              nanoseconds_per_call([&] { cudaPointerGetAttributes(&attributes, host); }));
  std::printf("empty kernel launch: %.1f ns\n",
              nanoseconds_per_call([&] { empty_kernel<<<1, 1>>>(); }, 20000));
  cudaDeviceSynchronize();
  return 0;
}
