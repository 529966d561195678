// Does compute-sanitizer's racecheck see the hand-off of the two-role square Kron kernel
// (kron_fused_square.cu) as synchronisation? 256 "step" threads write shared memory, meet at
// a named barrier, then one of them arrives (release) on an mbarrier; 128 "mover" threads
// wait on it (acquire) and read everything. Variants:
//   0  one arrival after the named barrier (the kernel's hand-off);
//   1  every step thread arrives (count 256), no named barrier;
//   2  __syncthreads over all threads instead (the control: racecheck knows it);
//   3  no synchronisation at all (a real race: racecheck must report it).
// Build: nvcc -std=c++20 -arch=sm_90 -I src bench/probes/racecheck_mbarrier_probe.cu -o probe
// Run:   compute-sanitizer --tool racecheck ./probe V   (V = 0..3), and ./probe V without it:
// the sums must be 256 * 255 / 2 per mover.
#include <cstdio>
#include <cstdlib>

#include "runtime/mbarrier_device.cuh"

using namespace strop::detail;

constexpr int kSteps = 256, kMovers = 128;

__global__ void hand_off(int variant, int* out) {
  __shared__ int values[kSteps];
  __shared__ std::uint64_t ready;
  if (threadIdx.x == 0) {
    mbarrier_init(&ready, variant == 1 ? kSteps : 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  const int t = int(threadIdx.x);
  if (t < kSteps) {
    values[t] = t;
    if (variant == 0) {
      named_barrier_sync(1, kSteps);
      if (t == 0) mbarrier_arrive<true>(&ready, 0);
    } else if (variant == 1) {
      mbarrier_arrive<true>(&ready, 0);
    }
  }
  if (variant == 2) __syncthreads();
  if (t >= kSteps) {
    if (variant <= 1) mbarrier_wait(&ready, 0);
    int sum = 0;
    for (int i = 0; i < kSteps; ++i)
      sum += values[(i + t) % kSteps];
    out[t - kSteps] = sum;
  }
}

int main(int argc, char** argv) {
  const int variant = argc > 1 ? std::atoi(argv[1]) : 0;
  int* out = nullptr;
  cudaMalloc(&out, kMovers * sizeof(int));
  hand_off<<<1, kSteps + kMovers>>>(variant, out);
  int host[kMovers];
  cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int v : host)
    wrong += v != kSteps * (kSteps - 1) / 2;
  std::printf("variant %d: %d of %d sums wrong (%s)\n", variant, wrong, kMovers,
              cudaGetErrorString(cudaGetLastError()));
  cudaFree(out);
  return 0;
}
